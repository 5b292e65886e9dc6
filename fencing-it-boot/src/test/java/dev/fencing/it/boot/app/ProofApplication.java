package dev.fencing.it.boot.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import java.io.IOException;

/**
 * The application the proof tests run, as a user would write it with the starter: no {@code @EnableFencing}, no
 * fencing bean, only {@code fencing.*} properties. Accounts live in a Spring Data JDBC repository, orders in a Spring
 * Data JPA (Hibernate) repository, both with {@code @Fenced} writes; Flyway creates the tables (the application's and
 * the fence and lease tables) from {@code db/proof/{vendor}}.
 *
 * <p>{@link #main} is what a second instance runs in its own JVM: it prints {@value #PORT_LINE} and the HTTP port once
 * the server listens, and with {@code -Dproof.exit-on-stdin-eof=true} closes itself when its standard input ends
 * (the parent test JVM closed it or died), so that a child process never outlives the test that started it.
 */
@SpringBootApplication
public class ProofApplication {

    /** What {@link #main} prints before the HTTP port. */
    public static final String PORT_LINE = "PROOF-APPLICATION-PORT=";

    public static void main(String[] args) {
        ConfigurableApplicationContext context = SpringApplication.run(ProofApplication.class, args);
        if (Boolean.getBoolean("proof.exit-on-stdin-eof")) {
            Thread watchdog = new Thread(() -> {
                try {
                    while (System.in.read() != -1) {
                        // the parent writes nothing; only the end of the stream matters
                    }
                } catch (IOException ignored) {
                    // the parent is gone as well
                }
                context.close();
                System.exit(0);
            }, "proof-stdin-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
        }
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        System.out.println(PORT_LINE + port);
        System.out.flush();
    }
}
