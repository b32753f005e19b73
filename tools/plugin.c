/* Loading block classes from shared libraries (--plugin LIB.so). */
#include "plugin.h"

#include <drivegraph/block.h>
#include <dlfcn.h>
#include <stdio.h>

dg_registry *plugin_registry(int n, char **paths) {
  dg_registry *reg = dg_registry_new();
  if (!reg) {
    fprintf(stderr, "drivegraph: out of memory\n");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    /* RTLD_NOW: a missing symbol is reported here, not in the middle of a run */
    void *lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      fprintf(stderr, "drivegraph: plugin %s: %s\n", paths[i], dlerror());
      dg_registry_free(reg);
      return NULL;
    }
    /* ISO C has no function pointer from void*; POSIX guarantees it works */
    dg_plugin_init_fn init;
    *(void **)&init = dlsym(lib, DG_PLUGIN_ENTRY);
    if (!init) {
      fprintf(stderr, "drivegraph: plugin %s: no function %s (see docs/writing-blocks.md)\n",
              paths[i], DG_PLUGIN_ENTRY);
      dg_registry_free(reg);
      return NULL;
    }
    dg_error err = {0};
    if (init(reg, &err) != DG_OK) {
      fprintf(stderr, "drivegraph: plugin %s: %s\n", paths[i],
              err.text[0] ? err.text : "its init function failed");
      dg_registry_free(reg);
      return NULL;
    }
  }
  return reg;
}
