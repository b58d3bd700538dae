// A campaign's report from a coordinator, for the commands that only read reports (`benchlab
// report --coordinator`, `benchlab compare --coordinator`) and so need none of gRPC's headers.
#pragma once

#include <string>

#include "common/status.h"

namespace benchlab {

// The report of `campaign` from the coordinator at `address` (GetReport; `format` md, json or
// csv), with a deadline long enough for a large campaign's samples to be read and summarised.
// InvalidArgument when the address is malformed; NotFound or InvalidArgument with the
// coordinator's words when it has no such campaign or format; Unavailable ("coordinator ADDRESS:
// ...") for any other failure of the call.
Result<std::string> FetchReport(const std::string& address, const std::string& campaign,
                                const std::string& format);

}  // namespace benchlab
