// SPDX-License-Identifier: Apache-2.0
// Key files and the challenge-response of docs/remote.md, "Keys", over libsodium opened at first use.
#include "remote/auth.hpp"

#include <fcntl.h>
#include <sodium/core.h>
#include <sodium/crypto_auth_hmacsha512256.h>
#include <sodium/randombytes.h>
#include <sodium/utils.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "support/dynamic_library.hpp"

namespace devrt::remote::auth {
namespace {

#define DEVRT_SODIUM_SYMBOLS(X)                                                                                        \
  X(sodium_init)                                                                                                       \
  X(sodium_memzero)                                                                                                    \
  X(randombytes_buf)                                                                                                   \
  X(crypto_auth_hmacsha512256)                                                                                         \
  X(crypto_auth_hmacsha512256_verify)

struct SodiumApi {
#define DEVRT_SODIUM_SLOT(name) decltype(&::name) name = nullptr;
  DEVRT_SODIUM_SYMBOLS(DEVRT_SODIUM_SLOT)
#undef DEVRT_SODIUM_SLOT
};
static_assert(crypto_auth_hmacsha512256_KEYBYTES == kKeyBytes && crypto_auth_hmacsha512256_BYTES == kProofBytes);

struct Sodium {
  Status status;
  SodiumApi api;
  detail::DynamicLibrary library;
};

constexpr const char* kSodiumNames[] = {"libsodium.so.23", "libsodium.so"};
constexpr detail::VendorLibrary kSodium{"libsodium (remote keys need it)", kSodiumNames, "DEVRT_SODIUM_LIBRARY",
                                        "Debian: apt-get install libsodium23"};

Status open_sodium(Sodium& sodium) noexcept {
  DEVRT_RETURN_IF_ERROR(sodium.library.open(kSodium));
  DEVRT_RESOLVE_SYMBOLS(sodium.library, sodium.api, DEVRT_SODIUM_SYMBOLS, " (libsodium 1.0.18 or later is needed)");
  if (sodium.api.sodium_init() < 0) return make_error(ErrorCode::unavailable, "libsodium: sodium_init failed");
  return Status();
}

const Sodium& sodium() noexcept {
  // Built once, never destroyed (like every runtime devrt opens).
  static const Sodium* const library = [] {
    auto* s = new Sodium();
    s->status = open_sodium(*s);
    return s;
  }();
  return *library;
}

// The bytes a proof covers: the role's label, then the client's nonce, then the server's.
constexpr std::string_view kServerLabel = "devrt-server key proof v1";
constexpr std::string_view kClientLabel = "devrt-client key proof v1";
using Transcript = std::array<unsigned char, kServerLabel.size() + 2 * kNonceBytes>;
static_assert(kServerLabel.size() == kClientLabel.size());

Transcript transcript(Role role, const Nonce& client, const Nonce& server) noexcept {
  Transcript t{};
  const std::string_view label = role == Role::server ? kServerLabel : kClientLabel;
  std::memcpy(t.data(), label.data(), label.size());
  std::memcpy(t.data() + label.size(), client.data(), kNonceBytes);
  std::memcpy(t.data() + label.size() + kNonceBytes, server.data(), kNonceBytes);
  return t;
}

int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The key in `text` (64 hex digits, then at most a newline); false otherwise.
bool parse_key(std::string_view text, Key& key) noexcept {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.size() != 2 * kKeyBytes) return false;
  for (std::size_t i = 0; i < kKeyBytes; ++i) {
    const int high = hex_digit(text[2 * i]);
    const int low = hex_digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    key[i] = static_cast<unsigned char>(high << 4 | low);
  }
  return true;
}

// What is wrong with the key file's status for a secret, or ok.
Status check_owner_only(const std::string& path, const struct stat& st) noexcept {
  if (!S_ISREG(st.st_mode)) return make_error(ErrorCode::permission_denied, "key file ", path, ": not a regular file");
  if (st.st_uid != ::geteuid()) {
    return make_error(ErrorCode::permission_denied, "key file ", path, ": owned by user ", st.st_uid,
                      ", not by this user (", ::geteuid(), ")");
  }
  if ((st.st_mode & 077) != 0) {
    return make_error(ErrorCode::permission_denied, "key file ", path, ": group or others may access it (mode 0",
                      (st.st_mode & 0777) >> 6, (st.st_mode & 070) >> 3, st.st_mode & 07, "); chmod 600 ", path);
  }
  return Status();
}

} // namespace

Status available() noexcept { return sodium().status; }

Result<Key> read_key_file(const std::string& path) noexcept {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int error = errno;
    return make_error(error == ENOENT ? ErrorCode::not_found : ErrorCode::permission_denied, "key file ", path, ": ",
                      std::strerror(error), error == ELOOP ? " (a symbolic link: name the file itself)" : "");
  }
  struct stat st {};
  Status status = ::fstat(fd, &st) == 0 ? check_owner_only(path, st)
                                        : make_error(ErrorCode::permission_denied, "key file ", path, ": fstat failed");
  char text[2 * kKeyBytes + 2] = {};
  const ssize_t got = status.ok() ? ::read(fd, text, sizeof text) : 0;
  ::close(fd);
  DEVRT_RETURN_IF_ERROR(status);
  Key key{};
  const bool parsed = got > 0 && parse_key(std::string_view(text, static_cast<std::size_t>(got)), key);
  std::memset(text, 0, sizeof text);
  if (!parsed) {
    return make_error(ErrorCode::invalid_argument, "key file ", path,
                      ": not a key (64 hexadecimal digits; devrt-server --generate-key PATH writes one)");
  }
  return key;
}

Status write_key_file(const std::string& path) noexcept {
  DEVRT_RETURN_IF_ERROR(available());
  Key key{};
  sodium().api.randombytes_buf(key.data(), key.size());
  char text[2 * kKeyBytes + 1];
  constexpr char kDigits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < kKeyBytes; ++i) {
    text[2 * i] = kDigits[key[i] >> 4];
    text[2 * i + 1] = kDigits[key[i] & 15];
  }
  text[2 * kKeyBytes] = '\n';
  sodium().api.sodium_memzero(key.data(), key.size());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    const int error = errno;
    return make_error(error == EEXIST ? ErrorCode::already_exists : ErrorCode::permission_denied, "key file ", path,
                      ": ", std::strerror(error), error == EEXIST ? " (an existing key is never overwritten)" : "");
  }
  const bool written = ::write(fd, text, sizeof text) == static_cast<ssize_t>(sizeof text);
  sodium().api.sodium_memzero(text, sizeof text);
  if (::close(fd) != 0 || !written) {
    ::unlink(path.c_str());
    return make_error(ErrorCode::unavailable, "key file ", path, ": could not be written");
  }
  return Status();
}

Result<Nonce> random_nonce() noexcept {
  DEVRT_RETURN_IF_ERROR(available());
  Nonce nonce{};
  sodium().api.randombytes_buf(nonce.data(), nonce.size());
  return nonce;
}

Result<Proof> prove(const Key& key, Role role, const Nonce& client, const Nonce& server) noexcept {
  DEVRT_RETURN_IF_ERROR(available());
  const Transcript t = transcript(role, client, server);
  Proof proof{};
  sodium().api.crypto_auth_hmacsha512256(proof.data(), t.data(), t.size(), key.data());
  return proof;
}

bool verify(const Key& key, Role role, const Nonce& client, const Nonce& server, const unsigned char* proof,
            std::size_t bytes) noexcept {
  if (!available().ok() || proof == nullptr || bytes != kProofBytes) return false;
  const Transcript t = transcript(role, client, server);
  return sodium().api.crypto_auth_hmacsha512256_verify(proof, t.data(), t.size(), key.data()) == 0;
}

} // namespace devrt::remote::auth
