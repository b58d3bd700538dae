// How the checks of a reading command's arguments (coordinator/server/series_views.h,
// coordinator/server/audit_format.h) name the field that is wrong: as the command line's option
// ("--figure: expected ...") when the command checks what it was given, or as the request's
// field ("figure: expected ...") when the coordinator checks a call.
#pragma once

#include <string>

namespace benchlab {

enum class QueryFields { kOptions, kRequest };

// `option` ("--figure") or `field` ("figure"), as `fields` names them.
inline std::string QueryFieldName(QueryFields fields, const char* option, const char* field) {
  return fields == QueryFields::kOptions ? option : field;
}

}  // namespace benchlab
