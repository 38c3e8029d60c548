// SPDX-License-Identifier: Apache-2.0
// Skips in the conformance suite. Catch2 2 (Debian 12's) has no SKIP: a case that returns early
// counts as passed. So a case that cannot run says why with CONFORMANCE_SKIP, this listener
// keeps the reasons, and at the end of the run prints which cases were skipped, wholly (nothing
// else was checked) or on some devices; conformance_main exits 77 (meson: SKIP) when every case
// that ran was skipped.
#include "conformance.hpp"

#include <cstdio>
#include <mutex>

namespace conformance {
namespace {

struct SkippedCase {
  std::string name;
  bool whole = false; // no assertion ran: the case was skipped, not passed
  std::vector<std::string> reasons;
};

struct Skips {
  std::mutex mutex;
  std::vector<std::string> current; // reasons of the running case
  std::vector<SkippedCase> cases;
  std::size_t cases_run = 0;
};

Skips& skips() {
  static Skips instance;
  return instance;
}

class SkipListener : public Catch::TestEventListenerBase {
public:
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseStarting(const Catch::TestCaseInfo&) override {
    std::lock_guard lock(skips().mutex);
    skips().current.clear();
  }

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    Skips& s = skips();
    std::lock_guard lock(s.mutex);
    ++s.cases_run;
    if (s.current.empty()) return;
    s.cases.push_back(SkippedCase{stats.testInfo.name, stats.totals.assertions.total() == 0, s.current});
    s.current.clear();
  }

  void testRunEnded(const Catch::TestRunStats&) override {
    Skips& s = skips();
    std::lock_guard lock(s.mutex);
    std::size_t whole = 0;
    for (const SkippedCase& c : s.cases) whole += c.whole ? 1 : 0;
    std::printf("conformance-%.*s: %zu cases run: %zu passed, %zu skipped, %zu skipped on some devices\n",
                static_cast<int>(backend().name().size()), backend().name().data(), s.cases_run, s.cases_run - whole,
                whole, s.cases.size() - whole);
    for (const SkippedCase& c : s.cases) {
      for (const std::string& reason : c.reasons) {
        std::printf("  SKIP%s %s: %s\n", c.whole ? "" : " (in part)", c.name.c_str(), reason.c_str());
      }
    }
  }
};

} // namespace

void skip(const std::string& reason) {
  std::lock_guard lock(skips().mutex);
  skips().current.push_back(reason);
}

bool every_case_skipped() {
  Skips& s = skips();
  std::lock_guard lock(s.mutex);
  if (s.cases_run == 0) return false;
  std::size_t whole = 0;
  for (const SkippedCase& c : s.cases) whole += c.whole ? 1 : 0;
  return whole == s.cases_run;
}

CATCH_REGISTER_LISTENER(SkipListener)

} // namespace conformance
