/* Fuzz target: a cache entry's metadata as the module layer reads it on a hit — kernels, lowered
 * names, times, log, base directory (and so the line-table relocation of a real cubin) — with the
 * checksum file written to match, so the metadata's meaning is reached; and the entry's recorded
 * compile profile replayed into a trace. */
#include <xxhash.h>

#include "fuzz.h"

#include "cache/store/store.h"
#include "module/entry.h"
#include "module/module.h"
#include "trace/compile_profile.h"

#define KEY "0123456789abcdef0123456789abcdef"

static char *image;
static size_t image_len;

static void load_image(void)
{
  FILE *f = fopen(GPUJIT_FUZZ_IMAGE, "rb");
  long n;
  if (!f) {
    fprintf(stderr, "fuzz_cache_entry: cannot read %s (make_seeds.sh writes it)\n", GPUJIT_FUZZ_IMAGE);
    abort();
  }
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (n <= 0 || !(image = malloc((size_t)n)) || fread(image, 1, (size_t)n, f) != (size_t)n)
    abort();
  image_len = (size_t)n;
  fclose(f);
}

static void put(const char *dir, const char *name, const void *data, size_t size)
{
  char path[512];
  FILE *f;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (!(f = fopen(path, "wb")) || (size && fwrite(data, 1, size, f) != size))
    abort();
  fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_cache *c = NULL;
  gpujit_trace *t = NULL;
  gpujit_module *m;
  gpujit__key key;
  char dir[512], cache_dir[300], sum[18];

  if (!image)
    load_image();
  fz_dir();
  fz_reset();
  snprintf(cache_dir, sizeof(cache_dir), "%s/cache", fz_dir());
  co.dir = cache_dir;
  co.base_dir = "/work/checkout-of-the-fuzzer"; /* entries of other checkouts are relocated */
  if (gpujit_cache_open(&c, &co) != 0)
    abort();
  snprintf(dir, sizeof(dir), "%s/entries/%.2s", cache_dir, KEY);
  mkdir(dir, 0700);
  snprintf(dir, sizeof(dir), "%s/entries/%.2s/%s", cache_dir, KEY, &KEY[2]);
  mkdir(dir, 0700);
  snprintf(sum, sizeof(sum), "%016llx\n", (unsigned long long)XXH3_64bits(data, size));
  put(dir, "meta.json", data, size);
  put(dir, "meta.xxh3", sum, 17);
  put(dir, "image.cubin", image, image_len);
  put(dir, "profile.json", data, size);

  memset(&key, 0, sizeof(key));
  snprintf(key.hex, sizeof(key.hex), "%s", KEY);
  if (!(m = gpujit__module_new()) || !(m->name = strdup("saxpy")))
    abort();
  m->output = GPUJIT_OUTPUT_CUBIN;
  snprintf(m->arch, sizeof(m->arch), "sm_90");
  {
    gpujit__cache_extra profile = {.role = "profile"};
    gpujit__entry_lookup(c, &key, m, &profile);
    gpujit__buf_free(&profile.data);
  }
  gpujit_module_free(m);

  to.tmp_dir = fz_dir();
  if (gpujit_trace_create(&t, &to) != 0)
    abort();
  gpujit__trace_add_recorded(t, "saxpy", (const char *)data, size, 0);
  {
    char *json;
    size_t len;
    if (gpujit_trace_to_json(&json, &len, t) == 0)
      gpujit_free(json);
  }
  gpujit_trace_free(t);
  gpujit_cache_free(c);
  gpujit_error_clear();
  return 0;
}
