#include "table.h"

int table_entry(int i) { return i * i; }
