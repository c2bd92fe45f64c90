/* The sandbox's own directory for what agentbox makes inside for one run: a read-only tmpfs
 * pid 1 mounts when the run needs one (the trust files, trust.h; credentials' token files,
 * credential_file.h). Header only. */
#ifndef AGENTBOX_RUN_DIR_H
#define AGENTBOX_RUN_DIR_H

#define AGENTBOX_RUN_DIR "/run/agentbox"

#endif
