/* libarchive, loaded at run time: every gpujit process would otherwise pay for its dependency
 * chain (libxml2, nettle, …: ~3 ms), while only export, import and remote stores use it. */
#ifndef GPUJIT_CACHE_EXCHANGE_LIBARCHIVE_H
#define GPUJIT_CACHE_EXCHANGE_LIBARCHIVE_H

#include <archive.h>
#include <archive_entry.h>

#define GPUJIT__ARCHIVE_FUNCS(X) \
  X(archive_entry_filetype) \
  X(archive_entry_free) \
  X(archive_entry_hardlink) \
  X(archive_entry_new) \
  X(archive_entry_pathname) \
  X(archive_entry_set_filetype) \
  X(archive_entry_set_mtime) \
  X(archive_entry_set_pathname) \
  X(archive_entry_set_perm) \
  X(archive_entry_set_size) \
  X(archive_entry_size) \
  X(archive_error_string) \
  X(archive_read_data) \
  X(archive_read_free) \
  X(archive_read_new) \
  X(archive_read_next_header) \
  X(archive_read_open_filename) \
  X(archive_read_open_memory) \
  X(archive_read_support_filter_all) \
  X(archive_read_support_format_tar) \
  X(archive_write_add_filter_gzip) \
  X(archive_write_add_filter_xz) \
  X(archive_write_add_filter_zstd) \
  X(archive_write_close) \
  X(archive_write_data) \
  X(archive_write_free) \
  X(archive_write_header) \
  X(archive_write_new) \
  X(archive_write_open2) \
  X(archive_write_open_fd) \
  X(archive_write_set_bytes_in_last_block) \
  X(archive_write_set_format_pax_restricted)

typedef struct gpujit__archive_api {
#define GPUJIT__PTR(name) __typeof__(name) *name;
  GPUJIT__ARCHIVE_FUNCS(GPUJIT__PTR)
#undef GPUJIT__PTR
} gpujit__archive_api;

/** Load libarchive once. @return 0, or GPUJIT_EUNSUPPORTED saying it is not installed. */
int gpujit__archive_api_get(const gpujit__archive_api **out);

/** The table, once gpujit__archive_need() returned 0. */
extern const gpujit__archive_api *gpujit__archive;
/** Load the table into gpujit__archive. @return 0 or GPUJIT_EUNSUPPORTED. */
int gpujit__archive_need(void);

/** The member every gpujit archive carries. */
#define GPUJIT__EXPORT_MARKER "gpujit-export.json"

/* Users of the table call libarchive's functions by their names. */
#ifndef GPUJIT__ARCHIVE_NO_MACROS
#define archive_entry_filetype (gpujit__archive->archive_entry_filetype)
#define archive_entry_free (gpujit__archive->archive_entry_free)
#define archive_entry_hardlink (gpujit__archive->archive_entry_hardlink)
#define archive_entry_new (gpujit__archive->archive_entry_new)
#define archive_entry_pathname (gpujit__archive->archive_entry_pathname)
#define archive_entry_set_filetype (gpujit__archive->archive_entry_set_filetype)
#define archive_entry_set_mtime (gpujit__archive->archive_entry_set_mtime)
#define archive_entry_set_pathname (gpujit__archive->archive_entry_set_pathname)
#define archive_entry_set_perm (gpujit__archive->archive_entry_set_perm)
#define archive_entry_set_size (gpujit__archive->archive_entry_set_size)
#define archive_entry_size (gpujit__archive->archive_entry_size)
#define archive_error_string (gpujit__archive->archive_error_string)
#define archive_read_data (gpujit__archive->archive_read_data)
#define archive_read_free (gpujit__archive->archive_read_free)
#define archive_read_new (gpujit__archive->archive_read_new)
#define archive_read_next_header (gpujit__archive->archive_read_next_header)
#define archive_read_open_filename (gpujit__archive->archive_read_open_filename)
#define archive_read_open_memory (gpujit__archive->archive_read_open_memory)
#define archive_read_support_filter_all (gpujit__archive->archive_read_support_filter_all)
#define archive_read_support_format_tar (gpujit__archive->archive_read_support_format_tar)
#define archive_write_add_filter_gzip (gpujit__archive->archive_write_add_filter_gzip)
#define archive_write_add_filter_xz (gpujit__archive->archive_write_add_filter_xz)
#define archive_write_add_filter_zstd (gpujit__archive->archive_write_add_filter_zstd)
#define archive_write_close (gpujit__archive->archive_write_close)
#define archive_write_data (gpujit__archive->archive_write_data)
#define archive_write_free (gpujit__archive->archive_write_free)
#define archive_write_header (gpujit__archive->archive_write_header)
#define archive_write_new (gpujit__archive->archive_write_new)
#define archive_write_open2 (gpujit__archive->archive_write_open2)
#define archive_write_open_fd (gpujit__archive->archive_write_open_fd)
#define archive_write_set_bytes_in_last_block (gpujit__archive->archive_write_set_bytes_in_last_block)
#define archive_write_set_format_pax_restricted (gpujit__archive->archive_write_set_format_pax_restricted)
#endif

#endif
