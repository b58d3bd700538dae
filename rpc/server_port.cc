#include "rpc/server_port.h"

#include <grpc/grpc.h>

namespace benchlab {

void SetExclusivePort(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
}

}  // namespace benchlab
