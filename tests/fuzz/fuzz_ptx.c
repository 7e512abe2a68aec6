/* Fuzz target: PTX as the lean pass reads it (NVRTC's or nvJitLink's, or anything a toolkit may
 * write): statements, references, removal; and every variable name through the mangling reader.
 * Whatever the pass keeps must parse again and keep the same variables. */
#include "fuzz.h"

#include "compile/image/ptx.h"

/* The first byte of the input decides who owns the unreferenced variables. */
static int owner(const char *const *names, size_t count, bool *keep, void *payload)
{
  unsigned seed = *(const unsigned char *)payload;
  for (size_t i = 0; i < count; i++) {
    gpujit__strvec scope = {0};
    keep[i] = ((seed >> (i % 8)) & 1) != 0;
    if (gpujit__ptx_name_scope(&scope, names[i]) < 0)
      gpujit_error_clear();
    gpujit__strvec_free(&scope);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  unsigned char seed = size ? data[0] : 0;
  const char *keep[] = {"counter", "_Z5tableIfE"};
  gpujit__lean_policy p = {owner, &seed, keep, 2};
  gpujit__lean_stats st, again;
  gpujit__buf out = {0}, out2 = {0};
  char *text = fz_str(data, size);
  fz_dir();
  if (gpujit__ptx_lean(&out, text, size, &p, &st, NULL) == 0) {
    if (st.ptx_after != out.len || st.removed > st.variables || (st.note[0] && out.len != size))
      abort();
    /* the lean text is PTX the pass reads again, with nothing more to remove for the same owner */
    if (!st.note[0] && gpujit__ptx_lean(&out2, out.data, out.len, &p, &again, NULL) == 0 &&
        (again.note[0] || again.variables != st.variables - st.removed))
      abort();
  }
  gpujit__buf_free(&out);
  gpujit__buf_free(&out2);
  free(text);
  return 0;
}
