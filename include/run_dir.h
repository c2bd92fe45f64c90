/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The sandbox's own directory for what agentbox makes inside for one run: a read-only tmpfs
 * pid 1 mounts when the run needs one (the trust files, trust.h; credentials' token files,
 * credential_file.h), and the paths in it. Header only. */
#ifndef AGENTBOX_RUN_DIR_H
#define AGENTBOX_RUN_DIR_H

#define AGENTBOX_RUN_DIR "/run/agentbox"

/* With HTTPS interception, the run's CA certificate (PEM) and the bundle (the host's system
 * bundle, then the CA) there; the bundle is also bound over TRUST_SYSTEM_BUNDLE where the view
 * shows that file (the mount plan's, trust.h's). */
#define TRUST_DIR AGENTBOX_RUN_DIR
#define TRUST_CA_FILE TRUST_DIR "/ca.crt"
#define TRUST_BUNDLE_FILE TRUST_DIR "/ca-bundle.crt"
/* the run's CA by its subject hash (HASH.0), for clients that look CAs up in a directory */
#define TRUST_CERT_DIR TRUST_DIR "/certs"
/* the same anchors as the bundle, as the PKCS12 trust store a JVM reads (trust_jvm.h) */
#define TRUST_JVM_STORE TRUST_DIR "/java-cacerts.p12"
#define TRUST_SYSTEM_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

#endif
