// SPDX-License-Identifier: Apache-2.0
// The C API: version and errors, devices and attributes, targets, backends and plugins, build facts.
#include "capi/capi_internal.hpp"

#include <devrt/remote.hpp>

#include <cstdlib>
#include <new>
#include <string>
#include <variant>

#include "support/environment.hpp"
#include "support/json.hpp"

namespace devrt::capi {

namespace {
struct LastError {
  devrt_status code = DEVRT_STATUS_OK;
  std::string message;
};
thread_local LastError t_last_error;
} // namespace

devrt_status fail(const Status& status) noexcept { return fail(status.code(), status.message()); }

devrt_status fail(ErrorCode code, std::string_view message) noexcept {
  t_last_error.code = static_cast<devrt_status>(code);
  t_last_error.message.assign(message);
  return t_last_error.code;
}

devrt_status null_argument(const char* call, const char* parameter) noexcept {
  return fail(make_error(ErrorCode::invalid_argument, call, ": ", parameter, " is NULL"));
}

devrt_status check_copy_stream(const char* call, Device src, Device dst, const devrt_stream_ref* stream) noexcept {
  if (stream == nullptr) return DEVRT_STATUS_OK;
  Result<Device> runs_on = copy_device(src, dst);
  if (!runs_on.ok()) return fail(runs_on.status());
  const Device given = to_cpp(stream->device);
  if (given == *runs_on) return DEVRT_STATUS_OK;
  return fail(make_error(ErrorCode::invalid_argument, call, ": the copy ", src, " -> ", dst, " runs on ", *runs_on,
                         ", but a stream of ", given, " was given (pass one of ", *runs_on, ", or NULL)"));
}

void copy_out(std::string_view text, char* buffer, std::size_t capacity, std::size_t* length) noexcept {
  if (length != nullptr) *length = text.size();
  if (buffer == nullptr || capacity == 0) return;
  std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
  if (n > 0) std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
}

char* duplicate(std::string_view text) noexcept {
  auto* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) return nullptr;
  if (!text.empty()) std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  return copy;
}

devrt_status give_string(std::string_view text, char** out, const char* call) noexcept {
  if (out == nullptr) return null_argument(call, "the out parameter");
  char* copy = duplicate(text);
  if (copy == nullptr) return fail(make_error(ErrorCode::out_of_memory, call, ": cannot copy ", text.size(), " bytes"));
  *out = copy;
  return DEVRT_STATUS_OK;
}

namespace {

// An attribute's value (std::monostate when the device does not report it).
Result<AttributeValue> read_attribute(devrt_device device, std::int32_t attribute, AttributeType expected,
                                      const char* call) noexcept {
  if (attribute < 0 || attribute >= kAttributeCount) {
    return make_error(ErrorCode::invalid_argument, call, ": no attribute number ", attribute);
  }
  auto which = static_cast<Attribute>(attribute);
  if (attribute_type(which) != expected &&
      !(expected == AttributeType::integer && attribute_type(which) == AttributeType::boolean)) {
    return make_error(ErrorCode::invalid_argument, call, ": attribute ", attribute_name(which), " is not of this type");
  }
  return get_attribute(to_cpp(device), which);
}

} // namespace

} // namespace devrt::capi

using namespace devrt;
using namespace devrt::capi;

extern "C" {

uint32_t devrt_api_version(void) { return DEVRT_C_API_VERSION; }

const char* devrt_version(void) { return DEVRT_VERSION_STRING; }

const char* devrt_last_error(void) { return t_last_error.message.c_str(); }

devrt_status devrt_last_error_code(void) { return t_last_error.code; }

const char* devrt_status_name(devrt_status status) {
  if (status < DEVRT_STATUS_OK || status > DEVRT_STATUS_LAST) return "";
  return error_code_name(static_cast<ErrorCode>(status)).data();
}

void devrt_string_free(char* text) { std::free(text); }

devrt_status devrt_device_parse(const char* text, devrt_device* out) {
  if (text == nullptr) return null_argument("devrt_device_parse", "text");
  if (out == nullptr) return null_argument("devrt_device_parse", "out");
  Result<Device> device = parse_device(text);
  if (!device.ok()) return fail(device.status());
  *out = to_c(*device);
  return DEVRT_STATUS_OK;
}

const char* devrt_device_kind_name(int32_t kind) {
  // Every name is a string literal, so .data() is NUL-terminated; an unnamed kind is "".
  std::string_view name = device_kind_name(static_cast<DeviceKind>(kind));
  return name.empty() ? "" : name.data();
}

int32_t devrt_device_count(int32_t kind) { return device_count(static_cast<DeviceKind>(kind)); }

int devrt_device_exists(devrt_device device) { return device_exists(to_cpp(device)) ? 1 : 0; }

devrt_status devrt_device_synchronize(devrt_device device) { return to_status(synchronize(to_cpp(device))); }

const char* devrt_attribute_name(int32_t attribute) {
  if (attribute < 0 || attribute >= kAttributeCount) return "";
  return devrt::attribute_name(static_cast<Attribute>(attribute)).data();
}

int32_t devrt_attribute_type(int32_t attribute) {
  if (attribute < 0 || attribute >= kAttributeCount) return -1;
  return static_cast<int32_t>(attribute_type(static_cast<Attribute>(attribute)));
}

devrt_status devrt_device_attribute_int(devrt_device device, int32_t attribute, int64_t* value) {
  if (value == nullptr) return null_argument("devrt_device_attribute_int", "value");
  if (attribute == DEVRT_ATTR_EXIST) { // every device answers, with no registry error for a missing one
    *value = device_exists(to_cpp(device)) ? 1 : 0;
    return DEVRT_STATUS_OK;
  }
  Result<AttributeValue> read = read_attribute(device, attribute, AttributeType::integer, "devrt_device_attribute_int");
  if (!read.ok()) return fail(read.status());
  if (const auto* number = std::get_if<std::int64_t>(&*read)) {
    *value = *number;
  } else if (const auto* flag = std::get_if<bool>(&*read)) {
    *value = *flag ? 1 : 0;
  } else {
    return DEVRT_ATTR_NOT_REPORTED;
  }
  return DEVRT_STATUS_OK;
}

devrt_status devrt_device_attribute_string(devrt_device device, int32_t attribute, char* text, size_t capacity,
                                           size_t* length) {
  Result<AttributeValue> read =
      read_attribute(device, attribute, AttributeType::string, "devrt_device_attribute_string");
  if (!read.ok()) return fail(read.status());
  const auto* string = std::get_if<std::string>(&*read);
  if (string == nullptr) return DEVRT_ATTR_NOT_REPORTED;
  copy_out(*string, text, capacity, length);
  return DEVRT_STATUS_OK;
}

devrt_status devrt_device_attribute_dim3(devrt_device device, int32_t attribute, int64_t xyz[3]) {
  if (xyz == nullptr) return null_argument("devrt_device_attribute_dim3", "xyz");
  Result<AttributeValue> read = read_attribute(device, attribute, AttributeType::dim3, "devrt_device_attribute_dim3");
  if (!read.ok()) return fail(read.status());
  const auto* dim3 = std::get_if<Dim3>(&*read);
  if (dim3 == nullptr) return DEVRT_ATTR_NOT_REPORTED;
  xyz[0] = dim3->x;
  xyz[1] = dim3->y;
  xyz[2] = dim3->z;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_detect_target(devrt_device device, char** json) {
  if (json == nullptr) return null_argument("devrt_detect_target", "json");
  Result<Target> target = detect_target(to_cpp(device));
  if (!target.ok()) return fail(target.status());
  return give_string(target->to_json(), json, "devrt_detect_target");
}

devrt_status devrt_remote_connect(const char* address, int32_t* first_id, int32_t* count) {
  return devrt_remote_connect_keyed(address, nullptr, first_id, count);
}

devrt_status devrt_remote_connect_keyed(const char* address, const char* key_file, int32_t* first_id, int32_t* count) {
  if (address == nullptr) return null_argument("devrt_remote_connect", "address");
  if (first_id == nullptr) return null_argument("devrt_remote_connect", "first_id");
  if (count == nullptr) return null_argument("devrt_remote_connect", "count");
  if (key_file != nullptr && key_file[0] == '\0') {
    return fail(make_error(ErrorCode::invalid_argument,
                           "devrt_remote_connect_keyed: key_file is empty (NULL: DEVRT_REMOTE_KEY_FILE)"));
  }
  remote::ConnectOptions options;
  if (key_file != nullptr) options.key_file = key_file;
  Result<std::vector<Device>> added = remote::connect(address, options);
  if (!added.ok()) return fail(added.status());
  *first_id = added->empty() ? device_count(DeviceKind::remote) : added->front().id;
  *count = static_cast<int32_t>(added->size());
  return DEVRT_STATUS_OK;
}

devrt_status devrt_remote_describe(devrt_device device, char** json) {
  if (json == nullptr) return null_argument("devrt_remote_describe", "json");
  Result<remote::DeviceInfo> info = remote::describe(to_cpp(device));
  if (!info.ok()) return fail(info.status());
  std::string text = "{\"server\": ";
  detail::append_json_string(text, info->server);
  text += ", \"kind\": ";
  detail::append_json_string(text, device_kind_name(info->kind));
  text += ", \"index\": " + std::to_string(info->index) + ", \"name\": ";
  detail::append_json_string(text, info->name);
  text += info->lost ? ", \"lost\": true, \"lost_reason\": " : ", \"lost\": false, \"lost_reason\": ";
  detail::append_json_string(text, info->lost_reason);
  text += "}";
  return give_string(text, json, "devrt_remote_describe");
}

size_t devrt_backend_count(void) { return Registry::global().size(); }

const char* devrt_backend_name(size_t index) {
  const Registry& registry = Registry::global();
  return index < registry.size() ? registry.at(index).table()->name : nullptr;
}

int32_t devrt_backend_kind(size_t index) {
  const Registry& registry = Registry::global();
  return index < registry.size() ? static_cast<int32_t>(registry.at(index).kind()) : -1;
}

devrt_status devrt_backend_availability(const char* name) {
  if (name == nullptr) return null_argument("devrt_backend_availability", "name");
  BackendRef backend = Registry::global().find(std::string_view(name));
  if (!backend) return fail(make_error(ErrorCode::not_found, "no backend named '", name, "' is registered"));
  return to_status(backend.availability());
}

namespace {
devrt_status report_load(const Result<PluginLoad>& load, int32_t* outcome) {
  if (!load.ok()) return fail(load.status());
  if (outcome != nullptr) *outcome = static_cast<int32_t>(*load);
  return DEVRT_STATUS_OK;
}
} // namespace

devrt_status devrt_backend_load(const char* name, int32_t* outcome) {
  if (name == nullptr) return null_argument("devrt_backend_load", "name");
  return report_load(load_backend(name), outcome);
}

devrt_status devrt_plugin_load_file(const char* path, int32_t* outcome) {
  if (path == nullptr) return null_argument("devrt_plugin_load_file", "path");
  return report_load(load_plugin(path), outcome);
}

devrt_status devrt_backend_load_all(size_t* loaded) {
  Result<std::size_t> count = load_all_backends();
  if (!count.ok()) return fail(count.status());
  if (loaded != nullptr) *loaded = *count;
  return DEVRT_STATUS_OK;
}

size_t devrt_plugin_count(void) { return loaded_plugins().size(); }

devrt_status devrt_plugin_loaded(size_t index, char* path, size_t path_capacity, char* backends,
                                 size_t backends_capacity) {
  std::vector<LoadedPlugin> plugins = loaded_plugins();
  if (index >= plugins.size()) {
    return fail(make_error(ErrorCode::out_of_range, "devrt_plugin_loaded: index ", index, " but ", plugins.size(),
                           " plugins are loaded"));
  }
  std::string names;
  for (const std::string& name : plugins[index].backends) names += (names.empty() ? "" : ",") + name;
  copy_out(plugins[index].path, path, path_capacity, nullptr);
  copy_out(names, backends, backends_capacity, nullptr);
  return DEVRT_STATUS_OK;
}

size_t devrt_plugin_failure_count(void) { return plugin_failures().size(); }

devrt_status devrt_plugin_failure(size_t index, char* path, size_t path_capacity, char* reason,
                                  size_t reason_capacity) {
  std::vector<PluginFailure> failures = plugin_failures();
  if (index >= failures.size()) {
    return fail(make_error(ErrorCode::out_of_range, "devrt_plugin_failure: index ", index, " but ", failures.size(),
                           " plugins failed"));
  }
  copy_out(failures[index].path, path, path_capacity, nullptr);
  copy_out(failures[index].reason, reason, reason_capacity, nullptr);
  return DEVRT_STATUS_OK;
}

devrt_status devrt_plugin_search_path(char** text) {
  std::string joined;
  for (const std::string& directory : plugin_search_path()) joined += (joined.empty() ? "" : ":") + directory;
  return give_string(joined, text, "devrt_plugin_search_path");
}

devrt_status devrt_environment_flag(const char* name, int fallback, int* value) {
  if (name == nullptr) return null_argument("devrt_environment_flag", "name");
  if (value == nullptr) return null_argument("devrt_environment_flag", "value");
  if (fallback != 0 && fallback != 1) {
    return fail(make_error(ErrorCode::invalid_argument, "devrt_environment_flag(", name, "): fallback is ", fallback,
                           ", not 0 or 1"));
  }
  *value = detail::read_boolean_env_named(name, fallback == 1) ? 1 : 0;
  return DEVRT_STATUS_OK;
}

devrt_status devrt_build_info_json(char** json) {
  return give_string(build_info_json(), json, "devrt_build_info_json");
}

devrt_status devrt_describe(char** text) { return give_string(describe(), text, "devrt_describe"); }

} // extern "C"
