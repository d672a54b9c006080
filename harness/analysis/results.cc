// Names and failure semantics of the result codes (results.h).
#include "harness/analysis/results.h"

namespace samebits::harness {

const char* ResultCodeName(ResultCode code) {
  switch (code) {
    case ResultCode::kPass:
      return "PASS";
    case ResultCode::kFail:
      return "FAIL";
    case ResultCode::kXFail:
      return "XFAIL";
    case ResultCode::kXPass:
      return "XPASS";
    case ResultCode::kUnsupported:
      return "UNSUPPORTED";
    case ResultCode::kUnresolved:
      return "UNRESOLVED";
    case ResultCode::kTimeout:
      return "TIMEOUT";
  }
  return "UNRESOLVED";
}

bool IsFailure(ResultCode code) {
  // As in lit: an expected failure and an unsupported feature do not fail a
  // run; an unexpected pass does, because the expectation is now wrong.
  switch (code) {
    case ResultCode::kPass:
    case ResultCode::kXFail:
    case ResultCode::kUnsupported:
      return false;
    case ResultCode::kFail:
    case ResultCode::kXPass:
    case ResultCode::kUnresolved:
    case ResultCode::kTimeout:
      return true;
  }
  return true;
}

}  // namespace samebits::harness
