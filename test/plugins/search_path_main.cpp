// SPDX-License-Identifier: Apache-2.0
// Prints devrt::plugin_search_path(), one directory a line: the plugin test runs a set-user-ID
// copy of it to check that such a program ignores DEVRT_PLUGIN_PATH.
#include <cstdio>

#include <devrt/plugin.hpp>

// LeakSanitizer cannot run in a set-user-ID process (it stops the process to scan it), and such a
// process may ignore ASAN_OPTIONS: the default is compiled in. Unused without sanitizers.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

int main() {
  for (const std::string& directory : devrt::plugin_search_path()) std::printf("%s\n", directory.c_str());
  return 0;
}
