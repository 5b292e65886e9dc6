package dev.fencing.verify.nemesis;

import java.time.Duration;
import java.util.List;

/**
 * Which nemeses fit which run: {@code restart-lock-service} needs a lock service of separate processes to restart
 * (ZooKeeper, etcd), so a run on a JDBC lease is refused rather than run with a nemesis that does nothing. Also the
 * defaults of the nemeses that need no command-line option of their own.
 */
public final class NemesisChoice {

    /** The shortest time a killed lock-service member stays down. */
    public static final Duration DOWN_MIN = Duration.ofSeconds(2);
    /** The longest. */
    public static final Duration DOWN_MAX = Duration.ofSeconds(5);

    private NemesisChoice() {
    }

    /**
     * Throws {@link IllegalArgumentException}, naming the nemesis and the issuer, when {@code nemeses} holds
     * {@code restart-lock-service} and {@code issuer} is a JDBC lease ({@code jdbc-...}): there is no lock-service
     * process to restart.
     */
    public static void requireLockServiceFor(List<String> nemeses, String issuer) {
        if (nemeses.contains(RestartLockServiceNemesis.NAME) && issuer.startsWith("jdbc-")) {
            throw new IllegalArgumentException("--nemesis " + RestartLockServiceNemesis.NAME + " restarts members of "
                    + "a lock service (--issuer zookeeper or etcd); issuer " + issuer + " has none");
        }
    }
}
