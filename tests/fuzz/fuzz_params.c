/* Fuzz target: kernel parameter types read from a mangled symbol (the first line: a symbol comes
 * from an image, which may be anyone's) and from a written signature (the rest). Types must stay
 * in range and counts within the room given. */
#include "compile/image/params.h"

#include "fuzz.h"

static void check(const gpujit_param_type *t, int n, int max)
{
  if (n > max)
    abort();
  for (int i = 0; i < n; i++)
    if ((unsigned)t[i] > GPUJIT_PARAM_RECORD)
      abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1), *nl;
  gpujit_param_type t[8];
  int n = -1;
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  nl = strchr(text, '\n');
  if (nl)
    *nl = '\0';
  if (gpujit__params_demangle(text, t, 8, &n) == 0)
    check(t, n, 8);
  if (nl && gpujit__params_parse(nl + 1, t, 8, &n) == 0)
    check(t, n, 8);
  free(text);
  gpujit_error_clear();
  return 0;
}
