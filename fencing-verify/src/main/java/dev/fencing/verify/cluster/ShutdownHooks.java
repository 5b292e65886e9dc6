package dev.fencing.verify.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One JVM shutdown hook for every lock service that is started and not yet closed: a harness stopped by Ctrl-C or
 * SIGTERM (or ending without closing them) kills their members on the way out.
 */
final class ShutdownHooks {

    private static final Set<LockService> OPEN = ConcurrentHashMap.newKeySet();
    private static boolean installed;

    private ShutdownHooks() {
    }

    static synchronized void register(LockService service) {
        if (!installed) {
            Runtime.getRuntime().addShutdownHook(new Thread(ShutdownHooks::closeAll, "fencing-verify-lock-services"));
            installed = true;
        }
        OPEN.add(service);
    }

    static void unregister(LockService service) {
        OPEN.remove(service);
    }

    private static void closeAll() {
        for (LockService service : new ArrayList<>(OPEN)) {
            try {
                service.close();
            } catch (RuntimeException e) {
                System.err.println("fencing-verify: closing " + service.name() + " at " + service.directory()
                        + " on shutdown failed: " + e);
            }
        }
    }

    /** For tests: the services the hook would close now. */
    static List<LockService> open() {
        return List.copyOf(OPEN);
    }
}
