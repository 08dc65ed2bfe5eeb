#include "error_text.h"

#include <new>

#include "flag_names.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/runtime/session.h"

namespace partita::cli {

std::string error_text(const std::exception& e) {
  if (const auto* setup = dynamic_cast<const runtime::SetupError*>(&e)) {
    if (setup->cause() != nullptr) {
      try {
        std::rethrow_exception(setup->cause());
      } catch (const std::exception& cause) {
        return error_text(cause);
      } catch (...) {
      }
    }
  }
  if (const auto* parameter = dynamic_cast<const ParameterError*>(&e))
    return describe(*parameter, flag_name);
  if (dynamic_cast<const Error*>(&e) != nullptr) return in_flag_words(e.what());
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return "out of memory";
  const std::string what = e.what();
  return "internal: " + what.substr(0, what.find('\n'));
}

}  // namespace partita::cli
