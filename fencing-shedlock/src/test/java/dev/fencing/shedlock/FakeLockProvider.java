package dev.fencing.shedlock;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A ShedLock provider in memory for the unit tests: one holder per name, records unlocks and extensions. */
final class FakeLockProvider implements LockProvider {

    final Set<String> held = ConcurrentHashMap.newKeySet();
    final List<String> events = new ArrayList<>();
    volatile boolean extendable = true;

    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        String name = configuration.getName();
        if (!held.add(name)) {
            events.add("refused " + name);
            return Optional.empty();
        }
        events.add("locked " + name);
        return Optional.of(new Lock(name));
    }

    private final class Lock implements SimpleLock {
        private final String name;

        Lock(String name) {
            this.name = name;
        }

        @Override
        public void unlock() {
            events.add("unlocked " + name);
            held.remove(name);
        }

        @Override
        public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
            if (!extendable) {
                return Optional.empty();
            }
            events.add("extended " + name);
            return Optional.of(new Lock(name));
        }
    }
}
