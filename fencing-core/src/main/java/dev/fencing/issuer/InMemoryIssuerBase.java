package dev.fencing.issuer;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An {@link IssuerBase} in this process's memory, for tests and single-process demos: it forgets every base when the
 * process ends, so production needs a durable one (fencing-jdbc's {@code JdbcIssuerBase}).
 */
public final class InMemoryIssuerBase implements IssuerBase {

    private final ConcurrentHashMap<String, Long> bases = new ConcurrentHashMap<>();

    @Override
    public OptionalLong stored(String name) {
        Long base = bases.get(IssuerBase.checkName(name));
        return base == null ? OptionalLong.empty() : OptionalLong.of(base);
    }

    @Override
    public long establish(String name, long base) {
        IssuerBase.checkName(name);
        IssuerBase.checkBase(name, base);
        return bases.computeIfAbsent(name, unused -> base);
    }

    /** {@inheritDoc} This store does not keep when each was stored: in order of base, then name. */
    @Override
    public Map<String, Long> storedBases() {
        Map<String, Long> sorted = new LinkedHashMap<>();
        bases.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return Collections.unmodifiableMap(sorted);
    }
}
