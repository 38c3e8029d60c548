// SPDX-License-Identifier: Apache-2.0
// The shared key of a keyed devrt-server and its clients, and the mutual challenge-response that
// proves it (docs/remote.md, "Keys"): each side sends a fresh random nonce, and each proves the key
// with HMAC-SHA-512-256 (libsodium's crypto_auth) over its own role label and both nonces, so no
// proof can be replayed, reflected or made without the key. libsodium is opened at first use,
// never linked. Internal to the remote backend and devrt-server.
#ifndef DEVRT_SRC_REMOTE_AUTH_HPP
#define DEVRT_SRC_REMOTE_AUTH_HPP

#include <array>
#include <cstddef>
#include <string>

#include <devrt/status.hpp>

namespace devrt::remote::auth {

inline constexpr std::size_t kKeyBytes = 32;
inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kProofBytes = 32;
using Key = std::array<unsigned char, kKeyBytes>;
using Nonce = std::array<unsigned char, kNonceBytes>;
using Proof = std::array<unsigned char, kProofBytes>;

enum class Role { server, client };

// libsodium (libsodium.so.23; DEVRT_SODIUM_LIBRARY names another) opened and initialised: ok, or
// unavailable naming why. Thread-safe; opened once per process.
Status available() noexcept;

// The key in `path`: 64 hexadecimal digits (a trailing newline allowed). The file must be a
// regular file owned by this user and readable by nobody else (mode 0600 or 0400), else
// permission_denied says what to change; a missing file is not_found, other contents
// invalid_argument. Thread-safe.
Result<Key> read_key_file(const std::string& path) noexcept;
// Writes a new random key to `path`, created with mode 0600; an existing file is refused
// (already_exists). Thread-safe.
Status write_key_file(const std::string& path) noexcept;

// A fresh nonce from libsodium's randombytes. Thread-safe.
Result<Nonce> random_nonce() noexcept;
// What `role` sends to prove it holds `key` in the exchange of these two nonces. Thread-safe.
Result<Proof> prove(const Key& key, Role role, const Nonce& client, const Nonce& server) noexcept;
// True when `proof` (`bytes` long) is `role`'s proof of `key` for these nonces; compared in constant
// time. False also when libsodium is unavailable. Thread-safe.
bool verify(const Key& key, Role role, const Nonce& client, const Nonce& server, const unsigned char* proof,
            std::size_t bytes) noexcept;

} // namespace devrt::remote::auth

#endif // DEVRT_SRC_REMOTE_AUTH_HPP
