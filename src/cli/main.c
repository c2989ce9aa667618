#include <stdio.h>
int main(void) { puts("offwheel skeleton"); return 0; }
