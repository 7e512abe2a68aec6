/* The HTTP(S) remote store through libcurl: GET, PUT and HEAD of URL/KEY (nginx with WebDAV PUT,
 * bazel-remote with layout=bazel, any server that stores what is PUT). Credentials come from
 * environment variables and are never printed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "remote/backend.h"
#include "remote/libs.h"

typedef struct http {
  gpujit__backend base;
  const gpujit__curl_api *c;
  CURL *h;
  char *url; /* without a trailing slash */
  gpujit__remote_attrs a;
  struct curl_slist *headers; /* the prepared request's, until its transfer */
} http;

typedef struct sink {
  gpujit__buf *out;
  size_t max;
  bool too_big;
} sink;

static size_t on_data(char *p, size_t size, size_t n, void *user)
{
  sink *s = user;
  size_t len = size * n;
  if (s->out->len + len > s->max) {
    s->too_big = true;
    return 0; /* aborts the transfer */
  }
  return gpujit__buf_put(s->out, p, len) == 0 ? len : 0;
}

typedef struct source {
  const char *data;
  size_t len, at;
} source;

static size_t on_read(char *p, size_t size, size_t n, void *user)
{
  source *s = user;
  size_t len = size * n < s->len - s->at ? size * n : s->len - s->at;
  memcpy(p, s->data + s->at, len);
  s->at += len;
  return len;
}

static void key_url(char *out, size_t size, const http *h, const char *key)
{
  if (!strcmp(h->a.layout, "bazel")) /* bazel-remote's action cache wants 64 hex digits */
    snprintf(out, size, "%s/ac/%s%s", h->url, key, "00000000000000000000000000000000");
  else
    snprintf(out, size, "%s/%s", h->url, key);
}

/* The request for `key` common to every method: its URL, timeouts and credentials (libcurl copies
 * the URL; the headers are kept until transfer() frees them). */
static void prepare(http *h, const char *key)
{
  const gpujit__curl_api *c = h->c;
  struct curl_slist *headers = NULL;
  char url[4200];
  const char *token = h->a.bearer_env[0] ? getenv(h->a.bearer_env) : NULL;
  const char *userpwd = h->a.userpwd_env[0] ? getenv(h->a.userpwd_env) : NULL;
  key_url(url, sizeof(url), h, key);
  c->curl_easy_reset(h->h);
  c->curl_easy_setopt(h->h, CURLOPT_URL, url);
  c->curl_easy_setopt(h->h, CURLOPT_NOSIGNAL, 1L);
  c->curl_easy_setopt(h->h, CURLOPT_CONNECTTIMEOUT_MS, h->a.connect_ms);
  c->curl_easy_setopt(h->h, CURLOPT_TIMEOUT_MS, h->a.total_ms);
  c->curl_easy_setopt(h->h, CURLOPT_USERAGENT, "gpujit");
  if (token && *token) {
    char line[4096];
    snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
    headers = c->curl_slist_append(headers, line);
    memset(line, 0, sizeof(line));
  }
  if (userpwd && *userpwd) {
    c->curl_easy_setopt(h->h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    c->curl_easy_setopt(h->h, CURLOPT_USERPWD, userpwd);
  }
  if (headers)
    c->curl_easy_setopt(h->h, CURLOPT_HTTPHEADER, headers);
  h->headers = headers;
}

/* A transfer's outcome as a gpujit code: 404 is absent, other failures name the server. */
static int outcome(http *h, CURLcode r, const char *what, bool *absent)
{
  long status = 0;
  h->c->curl_easy_getinfo(h->h, CURLINFO_RESPONSE_CODE, &status);
  *absent = false;
  if (r != CURLE_OK)
    return gpujit__error(r == CURLE_OPERATION_TIMEDOUT ? GPUJIT_EBUSY : GPUJIT_EIO, "%s %s: %s", what, h->base.shown,
                         h->c->curl_easy_strerror(r));
  if (status == 404) {
    *absent = true;
    return GPUJIT_ENOENT;
  }
  if (status < 200 || status >= 300)
    return gpujit__error(GPUJIT_EIO, "%s %s: HTTP %ld", what, h->base.shown, status);
  return 0;
}

/* The prepared request run: its outcome (`what` names the method in a failure). */
static int transfer(http *h, const char *what, bool *absent)
{
  CURLcode r = h->c->curl_easy_perform(h->h);
  h->c->curl_slist_free_all(h->headers);
  h->headers = NULL;
  return outcome(h, r, what, absent);
}

static int http_get(gpujit__backend *b, const char *key, gpujit__buf *out)
{
  http *h = (http *)b;
  sink s = {out, h->a.max_bytes, false};
  bool absent;
  int err;
  prepare(h, key);
  h->c->curl_easy_setopt(h->h, CURLOPT_WRITEFUNCTION, on_data);
  h->c->curl_easy_setopt(h->h, CURLOPT_WRITEDATA, &s);
  out->len = 0;
  err = transfer(h, "GET", &absent);
  if (s.too_big)
    return gpujit__error(GPUJIT_ECORRUPT, "GET %s: the answer is over %zu bytes", h->base.shown, h->a.max_bytes);
  if (err < 0 && absent)
    gpujit_error_clear();
  return err;
}

static int http_put(gpujit__backend *b, const char *key, const void *data, size_t len)
{
  http *h = (http *)b;
  source s = {data, len, 0};
  gpujit__buf ignored = {0};
  sink discard = {&ignored, 1 << 20, false};
  bool absent;
  int err;
  prepare(h, key);
  h->c->curl_easy_setopt(h->h, CURLOPT_UPLOAD, 1L);
  h->c->curl_easy_setopt(h->h, CURLOPT_READFUNCTION, on_read);
  h->c->curl_easy_setopt(h->h, CURLOPT_READDATA, &s);
  h->c->curl_easy_setopt(h->h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
  h->c->curl_easy_setopt(h->h, CURLOPT_WRITEFUNCTION, on_data);
  h->c->curl_easy_setopt(h->h, CURLOPT_WRITEDATA, &discard);
  err = transfer(h, "PUT", &absent);
  gpujit__buf_free(&ignored);
  if (absent) /* a server that will not store under a new path (no WebDAV, say) */
    err = gpujit__error(GPUJIT_EIO, "PUT %s: HTTP 404 (does the server accept PUT?)", h->base.shown);
  return err;
}

static int http_exists(gpujit__backend *b, const char *key)
{
  http *h = (http *)b;
  bool absent;
  int err;
  prepare(h, key);
  h->c->curl_easy_setopt(h->h, CURLOPT_NOBODY, 1L);
  if ((err = transfer(h, "HEAD", &absent)) < 0 && absent)
    gpujit_error_clear();
  return err;
}

static void http_free(gpujit__backend *b)
{
  http *h = (http *)b;
  if (h->h)
    h->c->curl_easy_cleanup(h->h);
  free(h->url);
  free(h->base.shown);
  free(h);
}

int gpujit__http_open(gpujit__backend **out, const char *url, const gpujit__remote_attrs *a)
{
  const gpujit__curl_api *c;
  http *h;
  const char *at, *scheme_end = strstr(url, "://");
  int err;
  if ((err = gpujit__curl_get(&c, strncmp(url, "https://", 8) == 0)) < 0)
    return err;
  if (!(h = calloc(1, sizeof(*h))) || !(h->url = gpujit__strdup(url)))
    goto oom;
  h->c = c;
  h->a = *a;
  while (strlen(h->url) > 8 && h->url[strlen(h->url) - 1] == '/')
    h->url[strlen(h->url) - 1] = '\0';
  /* credentials in the URL are used but never shown */
  at = scheme_end ? strchr(scheme_end + 3, '@') : NULL;
  if (at && (!strchr(scheme_end + 3, '/') || at < strchr(scheme_end + 3, '/'))) {
    gpujit__buf shown = {0};
    gpujit__buf_printf(&shown, "%.*s://***@%s", (int)(scheme_end - url), url, at + 1);
    h->base.shown = shown.data;
  } else {
    h->base.shown = gpujit__strdup(h->url);
  }
  if (!h->base.shown || !(h->h = c->curl_easy_init()))
    goto oom;
  h->base.get = http_get;
  h->base.put = http_put;
  h->base.exists = http_exists;
  h->base.free = http_free;
  *out = &h->base;
  return 0;
oom:
  if (h)
    http_free(&h->base);
  return gpujit__error(GPUJIT_ENOMEM, "out of memory");
}
