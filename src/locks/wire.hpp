// SPDX-License-Identifier: BSD-3-Clause
// The command queue's hooks for lock commands (wire.cpp), with the Client as ctx.
#pragma once

#include <stdint.h>

namespace edgelock
{

class RespCommand;
struct Command;

bool wire_format(void *client, Command *cmd, uint64_t id, RespCommand &rc);
bool wire_reload(void *client, const Command *cmd, RespCommand &rc);

} // namespace edgelock
