// SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
// fetch.js URL OUT [URL OUT ...]: GETs each URL with Node's built-in fetch and writes a 200's
// body to OUT. One line per URL: STATUS:<code> DENIED:<its X-Agentbox-Denied header, or empty>,
// or ERROR:<what> when no response came. Node 20's fetch reads no proxy variable: in agentbox
// its connections are the transparent capture's.
const fs = require('fs');

(async () => {
  const args = process.argv.slice(2);
  for (let i = 0; i + 1 < args.length; i += 2) {
    try {
      const r = await fetch(args[i], { signal: AbortSignal.timeout(30000) });
      const body = Buffer.from(await r.arrayBuffer());
      console.log('STATUS:' + r.status + ' DENIED:' + (r.headers.get('x-agentbox-denied') || ''));
      if (r.status === 200) fs.writeFileSync(args[i + 1], body);
    } catch (e) {
      console.log('ERROR:' + (e.cause ? (e.cause.code || e.cause.message) : e));
    }
  }
})();
