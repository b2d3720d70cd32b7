/* Deliberately broken plugins for the ABI handshake tests. One source, one variant per BAD_* macro,
 * each built as its own shared object by tests/meson.build. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baton/plugin_api.h"

static const baton_host_api* api;

static baton_status noop_prepare(void* ps, void* ns, const baton_node* node, baton_error* error) {
  (void)ps;
  (void)ns;
  (void)node;
  (void)error;
  return BATON_OK;
}
static const baton_kernel kernel = {sizeof(baton_kernel), NULL, NULL, noop_prepare, noop_prepare};

#if defined(BAD_CTOR_MARKER) || defined(BAD_NO_ENTRY)
/* It says when its library is opened: its constructor runs at dlopen, before any baton call, and appends
 * a line to $BATON_TEST_OPENED_MARKER, so a test can tell a file that was never opened (a disabled
 * plugin; a library without the entry point, recognised from its symbol table). */
__attribute__((constructor)) static void note_opened(void) {
  const char* path = getenv("BATON_TEST_OPENED_MARKER");
  FILE* f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  fputs(PLUGIN_NAME " opened\n", f);
  fclose(f);
}
#endif

#if defined(BAD_NO_ENTRY)
/* Exports a function, but not the entry point. */
BATON_PLUGIN_EXPORT int not_the_entry_point(void) { return kernel.struct_size > 0 && api == NULL; }
#else

#if defined(BAD_MIN_GT_MAX)
static const baton_op_decl ops[] = {{sizeof(baton_op_decl), 3, NULL, 4, 2, &kernel}};
#elif defined(BAD_NULL_CUSTOM)
static const baton_op_decl ops[] = {{sizeof(baton_op_decl), BATON_OP_CUSTOM, NULL, 1, 1, &kernel}};
#elif defined(BAD_DUPLICATE_OP)
static const baton_op_decl ops[] = {{sizeof(baton_op_decl), 3, NULL, 1, 3, &kernel},
                                    {sizeof(baton_op_decl), 3, NULL, 2, 5, &kernel}};
#else
static const baton_op_decl ops[] = {{sizeof(baton_op_decl), 3 /* CONV_2D */, NULL, 1, 1, &kernel}};
#endif

#if defined(BAD_UNRESOLVED)
/* A function no library defines: the dynamic loader refuses the file when it opens it (RTLD_NOW). */
extern int baton_test_nobody_defines_this(void);
#endif

static baton_status create(const baton_plugin_host* host, void** state, baton_error* error) {
  (void)host;
  *state = NULL;
#if defined(BAD_UNRESOLVED)
  if (!baton_test_nobody_defines_this()) return BATON_ERROR;
#endif
#if defined(BAD_INIT_FAILS)
  api->error_set(error, "no such device /dev/fake-npu");
  return BATON_ERROR;
#else
  (void)error;
  return BATON_OK;
#endif
}

#if defined(BAD_NEWER_MINOR)
/* Built as if against ABI 1.1, whose descriptor has a field more: the host must read what it knows. */
typedef struct newer_desc {
  baton_plugin_desc base;
  const char* field_from_the_future;
} newer_desc;
static const newer_desc desc = {
    {sizeof(newer_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR + 1, PLUGIN_NAME, "1.0", BATON_PLUGIN_OP_PACK,
     "built for a newer minor ABI", ops, 1, NULL, 0, 0, create, NULL, NULL, NULL},
    "ignored by older hosts"};
#define DESC (&desc.base)
#elif defined(BAD_OLDER_MINOR)
/* Built as if against an older minor that ended before the `flags` field. */
static const baton_plugin_desc desc = {
    offsetof(baton_plugin_desc, destroy) + sizeof(void*), BATON_ABI_VERSION_MAJOR, 0, PLUGIN_NAME, "1.0",
    BATON_PLUGIN_OP_PACK, "built for an older minor ABI", ops, 1, NULL, 0, 0, create, NULL, NULL, NULL};
#define DESC (&desc)
#elif defined(BAD_WRONG_MAJOR)
static const baton_plugin_desc desc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR + 1, 0, PLUGIN_NAME, "1.0", BATON_PLUGIN_OP_PACK,
    "built for the next major ABI", ops, 1, NULL, 0, 0, create, NULL, NULL, NULL};
#define DESC (&desc)
#else
static const baton_plugin_desc desc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, PLUGIN_NAME, "1.0",
    BATON_PLUGIN_OP_PACK, "a test plugin", ops, sizeof ops / sizeof ops[0], NULL, 0, 0, create, NULL, NULL, NULL};
#define DESC (&desc)
#endif

BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t major, uint32_t minor,
                                                                const baton_host_api* host_api, baton_error* error) {
  (void)major;
  (void)minor;
  (void)error;
  api = host_api;
  return DESC;
}
#endif
