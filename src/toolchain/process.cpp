// SPDX-License-Identifier: Apache-2.0
// Running external programs: posix_spawn into a new process group, output through non-blocking
// pipes, a pidfd (or short polls where there is none) to see the exit, and a tree kill on timeout.
#include <devrt/toolchain/process.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/environment.hpp"
#include "toolchain_internal.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace devrt::toolchain {
namespace {

using Clock = std::chrono::steady_clock;

bool is_executable_file(const std::string& path) noexcept {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The value of NAME in an environment block (nullptr when absent).
const char* env_value(const std::vector<std::string>& env, std::string_view name) noexcept {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->size() > name.size() && it->compare(0, name.size(), name) == 0 && (*it)[name.size()] == '=') {
      return it->c_str() + name.size() + 1;
    }
  }
  return nullptr;
}

std::vector<std::string> child_environment(const ProcessOptions& options) {
  std::vector<std::string> env;
  if (options.inherit_environment) {
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) env.emplace_back(*entry);
  }
  for (const std::string& change : options.env) {
    std::string_view name(change);
    name = name.substr(0, name.find('='));
    std::erase_if(env, [&](const std::string& entry) {
      return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=';
    });
    if (change.find('=') != std::string::npos) env.push_back(change);
  }
  return env;
}

Result<std::string> find_on_path(std::string_view name, const char* path_variable) noexcept {
  if (name.empty()) return Status(ErrorCode::invalid_argument, "find_program: empty program name");
  std::string program(name);
  if (program.find('/') != std::string::npos) {
    if (is_executable_file(program)) return program;
    return make_error(ErrorCode::unavailable, "tool not found: ", name, " (not an executable file)");
  }
  std::string_view path = path_variable != nullptr ? path_variable : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string_view::npos) end = path.size();
    std::string dir(path.substr(start, end - start));
    // An empty or relative entry would name another folder in each working folder: skipped.
    if (!dir.empty() && dir[0] == '/' && is_executable_file(dir + "/" + program)) return dir + "/" + program;
    start = end + 1;
  }
  return make_error(ErrorCode::unavailable, "tool not found: ", name, " (searched PATH=", path, ")");
}

void set_nonblocking(int fd) noexcept { static_cast<void>(::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK)); }

// Reads what is available; false at end of file or on an error.
bool drain(int fd, std::string& into) noexcept {
  char buffer[16384];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

int open_pidfd(pid_t pid) noexcept {
#if defined(SYS_pidfd_open)
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  static_cast<void>(pid);
  return -1;
#endif
}

void record_exit(int status, ProcessResult& result) noexcept {
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
}

// Parent process id of every process, from /proc/<pid>/stat.
std::multimap<int, int> process_children() {
  std::multimap<int, int> children;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0') continue;
    std::string stat_path = std::string("/proc/") + entry->d_name + "/stat";
    std::FILE* file = std::fopen(stat_path.c_str(), "r");
    if (file == nullptr) continue;
    char line[512];
    std::size_t n = std::fread(line, 1, sizeof line - 1, file);
    static_cast<void>(std::fclose(file));
    line[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so use the last ')'.
    const char* close = std::strrchr(line, ')');
    if (close == nullptr) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(close + 1, " %c %d", &state, &ppid) == 2) children.emplace(ppid, static_cast<int>(pid));
  }
  ::closedir(proc);
  return children;
}

std::vector<int> descendants(int root) {
  std::multimap<int, int> children = process_children();
  std::vector<int> found;
  std::vector<int> frontier{root};
  while (!frontier.empty()) {
    int parent = frontier.back();
    frontier.pop_back();
    auto range = children.equal_range(parent);
    for (auto it = range.first; it != range.second; ++it) {
      if (std::find(found.begin(), found.end(), it->second) == found.end()) {
        found.push_back(it->second);
        frontier.push_back(it->second);
      }
    }
  }
  return found;
}

} // namespace

std::string ProcessResult::describe() const {
  if (timed_out) {
    return "timed out after " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()) +
           " ms";
  }
  if (term_signal != 0) return detail::signal_description(term_signal);
  return "exited with status " + std::to_string(exit_code);
}

Result<std::string> find_program(std::string_view name) noexcept {
  return find_on_path(name, devrt::detail::read_path_list_env("PATH"));
}

Result<std::string> find_first_program(const std::vector<std::string>& names) noexcept {
  std::string tried;
  for (const std::string& name : names) {
    Result<std::string> path = find_program(name);
    if (path.ok()) return path;
    tried += tried.empty() ? name : ", " + name;
  }
  return Status(ErrorCode::unavailable, "tool not found: none of " + tried + " is on PATH");
}

Status kill_process_tree(int pid) noexcept {
  if (pid <= 0) return make_error(ErrorCode::invalid_argument, "kill_process_tree: invalid pid ", pid);
  // Stop the tree first so that nothing in it can fork while it is being collected; a second
  // pass catches children forked just before their parent stopped.
  static_cast<void>(::kill(pid, SIGSTOP));
  std::vector<int> tree;
  for (int pass = 0; pass < 2; ++pass) {
    tree = descendants(pid);
    for (int child : tree) static_cast<void>(::kill(child, SIGSTOP));
  }
  static_cast<void>(::kill(pid, SIGKILL));
  for (int child : tree) static_cast<void>(::kill(child, SIGKILL));
  static_cast<void>(::kill(-pid, SIGKILL)); // and its process group, when it leads one
  return Status();
}

namespace detail {

std::vector<std::string> versioned_names(std::string_view base) {
  std::vector<std::string> names;
  for (int version = 30; version >= 7; --version) names.push_back(std::string(base) + "-" + std::to_string(version));
  return names;
}

Result<std::string> install_root(std::string_view program) noexcept {
  DEVRT_ASSIGN_OR_RETURN(std::string path, find_program(program));
  std::error_code ignored;
  std::filesystem::path real = std::filesystem::canonical(path, ignored);
  return (real.empty() ? std::filesystem::path(path) : real).parent_path().parent_path().string();
}

Status run_build(std::vector<std::string> command, const std::vector<std::string>& options, const std::string& output,
                 const std::vector<std::string>& inputs, std::string_view what) noexcept {
  ProcessOptions run;
  run.argv = std::move(command);
  run.argv.insert(run.argv.end(), options.begin(), options.end());
  run.argv.insert(run.argv.end(), {"-o", output});
  run.argv.insert(run.argv.end(), inputs.begin(), inputs.end());
  DEVRT_ASSIGN_OR_RETURN(ProcessResult result, run_process(run));
  return check_process(result, what);
}

int wait_for_exit(int pid) noexcept {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string signal_description(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  return "killed by signal " + std::to_string(signal_number) +
         (name != nullptr ? std::string(" (SIG") + name + ")" : "");
}

} // namespace detail

namespace {

// A child's standard streams: the parent's ends, and the child's until it has started.
struct ChildPipes {
  detail::Fd in_read, in_write, out_read, out_write, err_read, err_write;
};

// Starts `program` in its own process group, its streams on the pipes, its signals at their
// defaults and unblocked; closes the child's ends of the pipes.
Result<pid_t> spawn_child(const std::string& program, const ProcessOptions& options,
                          const std::vector<std::string>& env, ChildPipes& pipes) {
  std::vector<char*> argv;
  for (const std::string& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipes.in_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, pipes.out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, pipes.err_write.get(), 2);
  if (!options.working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, options.working_directory.c_str());
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t all;
  sigfillset(&all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setpgroup(&attributes, 0); // its own group: a timeout kills what it started
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  pid_t pid = 0;
  int spawn_error = posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  pipes.in_read.reset();
  pipes.out_write.reset();
  pipes.err_write.reset();
  if (spawn_error != 0) {
    return make_error(spawn_error == ENOENT ? ErrorCode::unavailable : ErrorCode::internal, "run_process(", program,
                      "): cannot start it: ", std::strerror(spawn_error),
                      options.working_directory.empty() ? "" : " (working directory ", options.working_directory,
                      options.working_directory.empty() ? "" : ")");
  }
  return pid;
}

// Feeds the child its input and collects its output until it exits, or until the deadline,
// when its process tree is killed (result.timed_out). Returns its wait status.
int communicate(pid_t pid, const ProcessOptions& options, Clock::time_point deadline, ChildPipes& pipes,
                ProcessResult& result) {
  set_nonblocking(pipes.out_read.get());
  set_nonblocking(pipes.err_read.get());
  set_nonblocking(pipes.in_write.get());
  detail::Fd pidfd(open_pidfd(pid));
  std::size_t input_written = 0;
  if (options.input.empty()) pipes.in_write.reset();
  int status = 0;
  for (;;) {
    int wait_ms = -1;
    if (options.timeout.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        static_cast<void>(kill_process_tree(pid));
        result.timed_out = true;
        return detail::wait_for_exit(pid);
      }
      wait_ms = static_cast<int>(left);
    }
    if (pidfd.get() < 0) wait_ms = wait_ms < 0 ? 10 : std::min(wait_ms, 10);
    pollfd fds[4];
    nfds_t count = 0;
    if (pipes.out_read.get() >= 0) fds[count++] = {pipes.out_read.get(), POLLIN, 0};
    if (pipes.err_read.get() >= 0) fds[count++] = {pipes.err_read.get(), POLLIN, 0};
    if (pipes.in_write.get() >= 0) fds[count++] = {pipes.in_write.get(), POLLOUT, 0};
    if (pidfd.get() >= 0) fds[count++] = {pidfd.get(), POLLIN, 0};
    int ready = ::poll(fds, count, wait_ms);
    if (ready < 0 && errno != EINTR) return status;
    if (pipes.out_read.get() >= 0 && !drain(pipes.out_read.get(), result.out)) pipes.out_read.reset();
    if (pipes.err_read.get() >= 0 && !drain(pipes.err_read.get(), result.err)) pipes.err_read.reset();
    if (pipes.in_write.get() >= 0) {
      detail::SigpipeGuard guard;
      ssize_t n =
          ::write(pipes.in_write.get(), options.input.data() + input_written, options.input.size() - input_written);
      if (n > 0) input_written += static_cast<std::size_t>(n);
      if (input_written == options.input.size() || (n < 0 && errno != EAGAIN && errno != EINTR)) pipes.in_write.reset();
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
  }
}

} // namespace

Result<ProcessResult> run_process(const ProcessOptions& options) noexcept {
  if (options.argv.empty()) return Status(ErrorCode::invalid_argument, "run_process: empty argv");
  std::vector<std::string> env = child_environment(options);
  DEVRT_ASSIGN_OR_RETURN(std::string program, find_on_path(options.argv[0], env_value(env, "PATH")));
  ChildPipes pipes;
  if (!detail::make_pipe(pipes.in_read, pipes.in_write) || !detail::make_pipe(pipes.out_read, pipes.out_write) ||
      !detail::make_pipe(pipes.err_read, pipes.err_write)) {
    return make_error(ErrorCode::internal, "run_process(", options.argv[0], "): pipe: ", std::strerror(errno));
  }
  Clock::time_point start = Clock::now();
  DEVRT_ASSIGN_OR_RETURN(pid_t pid, spawn_child(program, options, env, pipes));
  ProcessResult result;
  int status = communicate(pid, options, start + options.timeout, pipes, result);
  // What the child wrote before exiting is still in the pipes; descendants that keep them open
  // are not waited for.
  if (pipes.out_read.get() >= 0) drain(pipes.out_read.get(), result.out);
  if (pipes.err_read.get() >= 0) drain(pipes.err_read.get(), result.err);
  result.elapsed = Clock::now() - start;
  if (!result.timed_out) record_exit(status, result);
  return result;
}

Status check_process(const ProcessResult& result, std::string_view what) noexcept {
  if (result.succeeded()) return Status();
  std::string message(what);
  message += ": ";
  message += result.describe();
  for (const std::string* text : {&result.err, &result.out}) {
    if (text->empty()) continue;
    message += '\n';
    message.append(*text, 0, std::min<std::size_t>(text->size(), detail::kMaxToolOutput));
    if (text->size() > detail::kMaxToolOutput) message += "\n[... output truncated]";
  }
  return Status(ErrorCode::tool_failed, message);
}

Result<std::string> run_and_capture(std::vector<std::string> argv, std::chrono::milliseconds timeout) noexcept {
  ProcessOptions options;
  options.argv = std::move(argv);
  options.timeout = timeout;
  DEVRT_ASSIGN_OR_RETURN(ProcessResult result, run_process(options));
  DEVRT_RETURN_IF_ERROR(check_process(result, options.argv[0]));
  return std::move(result.out);
}

} // namespace devrt::toolchain
