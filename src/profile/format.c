/* The profile report as text: the run's totals, devices, module rows and notes (the table
 * `gpujit profile` prints and gpujit.profile shows). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/demangle.h"
#include "base/error.h"
#include "gpujit/profile.h"
#include "profile/model.h"

static void ms_cell(gpujit__buf *f, double v)
{
  if (v > 0)
    gpujit__buf_printf(f, " %10.1f", v);
  else
    gpujit__buf_printf(f, " %10s", "");
}

/* "by compiler: fw: 3 compiles, 412.0 ms (1 cache hit); ptxas: 29 inside others, 1598.2 ms" — where
 * the time went when more than NVRTC compiled. */
static void by_compiler(const gpujit_profile *p, gpujit__buf *f)
{
  const gpujit_profile_compiler *c;
  size_t n = gpujit_profile_table_rows(p, GPUJIT_PROFILE_COMPILERS, (const void **)&c, NULL);
  if (n == 0 || (n == 1 && !c[0].within && (!strcmp(c[0].compiler, "nvrtc") || !strcmp(c[0].compiler, "nvjitlink"))))
    return;
  gpujit__buf_printf(f, "  by compiler:");
  for (size_t i = 0; i < n; i++) {
    gpujit__buf_printf(f, "%s %s:", i ? ";" : "", c[i].compiler);
    /* "3 compiles, 6406.5 ms", not "3 × 6406.5 ms", which reads as a product */
    if (c[i].compiles)
      gpujit__buf_printf(f, " %llu compile%s, %.1f ms", (unsigned long long)c[i].compiles, c[i].compiles == 1 ? "" : "s",
                         c[i].ms);
    if (c[i].within)
      gpujit__buf_printf(f, "%s%llu inside others, %.1f ms", c[i].compiles ? "; " : " ",
                         (unsigned long long)c[i].within, c[i].within_ms);
    if (c[i].cache_hits)
      gpujit__buf_printf(f, " (%llu cache hit%s)", (unsigned long long)c[i].cache_hits, c[i].cache_hits == 1 ? "" : "s");
    if (c[i].failed)
      gpujit__buf_printf(f, " (%llu failed)", (unsigned long long)c[i].failed);
  }
  gpujit__buf_printf(f, "\n");
}

/* A step's streams as a small table, its top kernels on a line. */
static void step_detail(const gpujit_profile *p, gpujit__buf *f, int id)
{
  const gpujit_profile_step_stream *st;
  const gpujit_profile_step_kernel *k;
  size_t ns = gpujit_profile_table_rows(p, GPUJIT_PROFILE_STEP_STREAMS, (const void **)&st, NULL);
  size_t nk = gpujit_profile_table_rows(p, GPUJIT_PROFILE_STEP_KERNELS, (const void **)&k, NULL), shown = 0;
  bool head = false;
  for (size_t i = 0; i < ns; i++) {
    if (st[i].step != id)
      continue;
    if (!head)
      gpujit__buf_printf(f, "    %3s %7s %6s %10s %10s %5s %9s %9s %9s %9s %12s\n", "GPU", "stream", "ops", "busy ms",
                         "span ms", "gaps", "gap ms", "median µs", "p90 µs", "max µs", "host-wait ms");
    head = true;
    gpujit__buf_printf(f, "    %3u %7u %6llu %10.3f %10.3f %5llu %9.3f %9.1f %9.1f %9.1f %12.3f\n", st[i].device,
                       st[i].stream, (unsigned long long)st[i].ops, st[i].busy_ms, st[i].span_ms,
                       (unsigned long long)st[i].gaps, st[i].gap_ms, st[i].gap_median_us, st[i].gap_p90_us,
                       st[i].gap_max_us, st[i].host_wait_ms);
  }
  for (size_t i = 0; i < nk; i++) {
    char name[512];
    if (k[i].step != id || shown == 5)
      continue;
    gpujit__kernel_name(k[i].name, name, sizeof(name));
    gpujit__buf_printf(f, "%s %.80s ×%llu %.3f ms (%.1f µs each)", shown++ ? ";" : "    top kernels:", name,
                       (unsigned long long)k[i].count, k[i].total_ms, k[i].mean_us);
  }
  if (shown)
    gpujit__buf_printf(f, "\n");
}

#define STEPS_SHOWN 20 /* a process's steps the text shows */

/* The active steps, by process: each one's time, its streams, its top kernels and the verdict. */
static void steps(const gpujit_profile *p, gpujit__buf *f)
{
  const gpujit_profile_step_row *s;
  size_t n = gpujit_profile_steps(p, &s), shown = 0;
  char launches[64];
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || s[i].pid != s[i - 1].pid) {
      shown = 0;
      gpujit__buf_printf(f, "\n  steps of process %d (from %s%s%s): the active ones\n", s[i].pid,
                         s[i].src[0] ? s[i].src : "?", s[i].schedule[0] ? "; schedule " : "", s[i].schedule);
    }
    if (shown++ == STEPS_SHOWN) { /* a run without a schedule records every step: --json has them all */
      size_t more = 1;
      while (i + more < n && s[i + more].pid == s[i].pid)
        more++;
      gpujit__buf_printf(f, "  ... %zu more active steps of process %d (--json has each)\n", more, s[i].pid);
      i += more - 1;
      continue;
    }
    gpujit__buf_printf(f, "  step %llu", (unsigned long long)s[i].step);
    if (s[i].cycle)
      gpujit__buf_printf(f, " (cycle %d)", s[i].cycle);
    /* launch records come with a schedule; a run recorded whole has GPU work but no launches */
    if (!s[i].launches && (s[i].kernels || s[i].copies || s[i].memsets))
      snprintf(launches, sizeof(launches), "launches not recorded (--schedule records them)");
    else
      snprintf(launches, sizeof(launches), "%llu launches", (unsigned long long)s[i].launches);
    gpujit__buf_printf(f, ": wall %.3f ms, %s, %llu kernels, %llu copies, %llu memsets; GPU busy "
                          "%.3f ms (%.0f %%), idle waiting for the host %.3f ms (%.0f %%)%s\n",
                       s[i].wall_ms, launches, (unsigned long long)s[i].kernels,
                       (unsigned long long)s[i].copies, (unsigned long long)s[i].memsets, s[i].busy_ms, s[i].busy_pct,
                       s[i].host_wait_ms, s[i].host_wait_pct,
                       s[i].complete ? "" : " (INCOMPLETE: still open when its process ended)");
    step_detail(p, f, s[i].id);
    gpujit__buf_printf(f, "    %s\n", s[i].summary);
  }
}

int gpujit_profile_format(const gpujit_profile *p, const char *title, long top, char **out)
{
  gpujit_profile_totals t;
  const gpujit_profile_module *m;
  const gpujit_profile_device *d;
  size_t nm = gpujit_profile_modules(p, &m), nd = gpujit_profile_devices(p, &d);
  const char *notes = gpujit_profile_notes(p);
  gpujit__buf b = {0}, *f = &b;
  if (!p || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_format: NULL argument");
  *out = NULL;
  gpujit_profile_totals_get(p, &t);
  gpujit__buf_printf(f, "\ngpujit profile: %s\n", title ? title : "");
  if (t.signal)
    gpujit__buf_printf(f, "  ended by signal %d", t.signal);
  else
    gpujit__buf_printf(f, "  exit %d", t.exit_status);
  gpujit__buf_printf(f, ", wall %.1f ms, %llu process%s%s\n", t.wall_ms, (unsigned long long)t.processes,
          t.processes == 1 ? "" : "es", !t.partial ? ""
          : t.processes_partial ? " (PARTIAL: a process did not end normally; what it recorded is here)"
                                : " (PARTIAL: records of a process are missing; the notes say whose and why)");
  gpujit__buf_printf(f, "  JIT compile %.1f ms in %llu compile%s", t.compile_ms, (unsigned long long)t.compiles,
          t.compiles == 1 ? "" : "s");
  if (t.failed)
    gpujit__buf_printf(f, " (%llu failed)", (unsigned long long)t.failed);
  if (t.repeats)
    gpujit__buf_printf(f, "; %llu identical repeat%s: %.1f ms a persistent cache would save", (unsigned long long)t.repeats,
            t.repeats == 1 ? "" : "s", t.repeat_ms);
  gpujit__buf_printf(f, "\n");
  by_compiler(p, f);
  if (t.link_ms > 0)
    gpujit__buf_printf(f, "  nvJitLink %.1f ms\n", t.link_ms);
  if (t.gpu_recorded) {
    gpujit__buf_printf(f, "  module load %.1f ms in %llu load%s (driver JIT %.1f ms)\n", t.load_ms, (unsigned long long)t.loads,
            t.loads == 1 ? "" : "s", t.jit_ms);
    for (size_t i = 0; i < nd; i++)
      gpujit__buf_printf(f, "  GPU %u: %llu launches %.3f ms, %llu copies %.3f ms, %llu memsets %.3f ms\n", d[i].device,
              (unsigned long long)d[i].launches, d[i].kernel_ms, (unsigned long long)d[i].copies, d[i].copy_ms,
              (unsigned long long)d[i].memsets, d[i].memset_ms);
    if (!nd)
      gpujit__buf_printf(f, "  GPU: nothing ran\n");
  } else {
    /* the real reason: a note says what became of CUPTI (--no-cupti, a program owning it, a CUPTI
     * that would not load), else no process made the CUDA context CUPTI starts with */
    gpujit__buf_printf(f, "  GPU: not recorded (%s)\n", strstr(notes, "CUPTI") ? "CUPTI did not run: see the note below"
                                                                             : "no process created a CUDA context");
  }
  if (nm) {
    gpujit__buf_printf(f, "\n  %-40s %-17s %8s %4s %10s %10s %8s %9s %10s %10s\n", "module", "origin", "compiles", "rep",
            "compile ms", "load ms", "kernels", "launches", "GPU ms", "break-even");
    for (size_t i = 0; i < nm && (top <= 0 || (long)i < top); i++) {
      char label[200], kernel[512];
      gpujit__kernel_name(m[i].kernel, kernel, sizeof(kernel));
      if (m[i].kernel[0] && strcmp(m[i].kernel, m[i].name))
        snprintf(label, sizeof(label), "%s (%s)", kernel, m[i].name);
      else if (strlen(m[i].name) > 40 && strchr(m[i].name, '/')) /* a path: its end names it */
        snprintf(label, sizeof(label), "...%s", m[i].name + strlen(m[i].name) - 37);
      else
        snprintf(label, sizeof(label), "%s", m[i].name);
      gpujit__buf_printf(f, "  %-40.40s %-17.17s %8llu %4llu", label, m[i].origin, (unsigned long long)m[i].compiles,
              (unsigned long long)m[i].repeats);
      ms_cell(f, m[i].compile_ms);
      ms_cell(f, m[i].load_ms);
      gpujit__buf_printf(f, " %8llu %9llu", (unsigned long long)m[i].kernels, (unsigned long long)m[i].launches);
      if (m[i].gpu_ms > 0)
        gpujit__buf_printf(f, " %10.3f", m[i].gpu_ms);
      else
        gpujit__buf_printf(f, " %10s", "");
      if (m[i].break_even > 0)
        gpujit__buf_printf(f, " %10.0f\n", m[i].break_even);
      else
        gpujit__buf_printf(f, " %10s\n", "");
    }
    if (top > 0 && nm > (size_t)top)
      gpujit__buf_printf(f, "  ... %zu more (--top 0 for all)\n", nm - (size_t)top);
  }
  steps(p, f);
  gpujit__profile_format_regions(p, f);
  if (t.autotune_launches)
    gpujit__buf_printf(f, "  autotuning: %llu launches, %.3f ms of GPU time benchmarking candidates: compile work, "
                          "in the rows' break-even, not in their launches\n",
                       (unsigned long long)t.autotune_launches, t.autotune_ms);
  if (t.untied)
    gpujit__buf_printf(f, "  %llu module%s made by no compile this profile saw (prebuilt, or built where it could not "
                          "look): tied to none\n",
                       (unsigned long long)t.untied, t.untied == 1 ? "" : "s");
  if (t.untraced)
    gpujit__buf_printf(f, "  %llu launches, copies and memsets past the trace budget: in the totals, not drawn\n",
            (unsigned long long)t.untraced);
  if (t.lost)
    gpujit__buf_printf(f, "  %llu records could not be kept (bounded tables or CUPTI's buffers): the totals miss them\n",
            (unsigned long long)t.lost);
  for (const char *n = notes; *n;) {
    size_t len = strcspn(n, "\n");
    gpujit__buf_printf(f, "  note: %.*s\n", (int)len, n);
    n += len + (n[len] == '\n');
  }
  if (gpujit__buf_put(f, "", 1) < 0) { /* the terminating NUL; any failed printf shows here too */
    gpujit__buf_free(f);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  *out = f->data;
  return 0;
}
