// SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
// Fetch.java URL OUT [URL OUT ...], run as a single source file (java Fetch.java ...): GETs each
// URL with HttpsURLConnection, the JVM's own client (its proxy from the https.proxyHost property
// and its trust from javax.net.ssl.trustStore, both of which agentbox puts in
// JAVA_TOOL_OPTIONS), and writes a 200's body to OUT. One line per URL:
// STATUS:<code> DENIED:<its X-Agentbox-Denied header, or empty>, or ERROR:<what>.
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import javax.net.ssl.HttpsURLConnection;

public class Fetch {
    public static void main(String[] args) {
        for (int i = 0; i + 1 < args.length; i += 2) {
            try {
                HttpsURLConnection c = (HttpsURLConnection) new URL(args[i]).openConnection();
                c.setConnectTimeout(30000);
                c.setReadTimeout(30000);
                int status = c.getResponseCode();
                String denied = c.getHeaderField("X-Agentbox-Denied");
                System.out.println("STATUS:" + status + " DENIED:" + (denied == null ? "" : denied));
                try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
                    if (status == 200) {
                        Files.copy(in, Path.of(args[i + 1]), StandardCopyOption.REPLACE_EXISTING);
                    } else if (in != null) {
                        in.readAllBytes();
                    }
                }
            } catch (IOException e) {
                System.out.println("ERROR:" + e);
            }
        }
    }
}
