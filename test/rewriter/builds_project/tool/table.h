#ifndef BUILDS_TABLE_H
#define BUILDS_TABLE_H
int table_entry(int i);
#endif
