// Formatting of commands per lock kind (command_format.cpp).
#pragma once

#include "client.hpp"

namespace edgelock
{

// Format cmd (slot id `id`) into c->cmd_buf. False when its lock handle is gone
// or it does not fit.
bool cmd_format(Client *c, const Command *cmd, uint64_t id, const char **out, size_t *len);

// The script a command runs, or kScriptCount for a plain command.
ScriptId cmd_script(Client *c, const Command *cmd);

} // namespace edgelock
