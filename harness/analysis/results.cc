// Names and failure semantics of the result codes; names of the diagnosis kinds (results.h).
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

const char* DiagnosisKindName(Diagnosis::Kind kind) {
  switch (kind) {
    case Diagnosis::Kind::kAllAgree:
      return "all-agree";
    case Diagnosis::Kind::kIdentityBroken:
      return "identity-broken";
    case Diagnosis::Kind::kMathLibraryDiffers:
      return "math-library-differs";
    case Diagnosis::Kind::kCodeChanged:
      return "code-changed";
    case Diagnosis::Kind::kNoReference:
      return "no-reference";
    case Diagnosis::Kind::kChildFailures:
      return "child-failures";
  }
  return "unknown";
}

bool ParseDiagnosisKind(const std::string& name, Diagnosis::Kind* out) {
  for (Diagnosis::Kind kind : {Diagnosis::Kind::kAllAgree, Diagnosis::Kind::kIdentityBroken,
                               Diagnosis::Kind::kMathLibraryDiffers, Diagnosis::Kind::kCodeChanged,
                               Diagnosis::Kind::kNoReference, Diagnosis::Kind::kChildFailures}) {
    if (name == DiagnosisKindName(kind)) {
      *out = kind;
      return true;
    }
  }
  return false;
}

bool ParseResultCode(const std::string& name, ResultCode* out) {
  for (ResultCode code :
       {ResultCode::kPass, ResultCode::kFail, ResultCode::kXFail, ResultCode::kXPass,
        ResultCode::kUnsupported, ResultCode::kUnresolved, ResultCode::kTimeout}) {
    if (name == ResultCodeName(code)) {
      *out = code;
      return true;
    }
  }
  return false;
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
