// See ../one/config.h.
#pragma once
#define TWO_OFFSET 5
