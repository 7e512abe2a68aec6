/* bench_rebind's many objects: each a copy of this one, with a little .data and .bss. */
char small_data[16384] = {1};
int small_bss[4096];
void *small_slot;

void small_hold(void *p);
void small_hold(void *p)
{
  small_slot = p;
  small_bss[0] = 1;
}
