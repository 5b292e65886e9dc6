package dev.fencing.testsupport.mutants;

import dev.fencing.context.MissingTokenException;
import dev.fencing.retention.CompactionResult;
import dev.fencing.retention.FenceCompaction;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.retention.ResourceFamily;
import dev.fencing.rule.FenceRule;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.rule.Verdict;
import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.token.FencingToken;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A small store of the kind a user writes from the SPI's Javadoc and docs/testing.md: one lock for the whole store,
 * a row (max_seen, holder, last use) per resource, family floors for compaction. Correct when built with
 * {@link Flaw#NONE}; each other flaw is one pitfall, which the contracts must catch.
 */
final class MiniStore implements FenceStore, FenceCompaction {

    /** One pitfall each. */
    enum Flaw {
        NONE,
        /** {@code >=} instead of {@code >}: an equal token is accepted from any holder. */
        EQUAL_ACCEPTED,
        /** Judges but never moves max_seen. */
        NEVER_ADVANCES,
        /** Checks and advances under the lock, then runs the write after letting it go (a window between). */
        CHECK_THEN_ACT,
        /** Keeps max_seen in the instance, not in the shared data: a new instance (a restart) forgets. */
        PER_INSTANCE,
        /** A refused duplicate takes the row's holder over: the rightful holder is refused next. */
        REFUSAL_TAKES_HOLDER,
        /** Runs the write, then throws the refusal. */
        WRITE_ON_REFUSAL,
        /** A token refused as out of range still moves max_seen up to it. */
        ADVANCE_ON_OUT_OF_RANGE,
        /** Resource names compared case-insensitively (a case-insensitive column). */
        CASE_INSENSITIVE,
        /** Resource names trimmed (a CHAR column, a PAD SPACE collation). */
        TRIMS,
        /** Keyed resources share their family's row (the key dropped). */
        IGNORES_KEY,
        /** Compaction sets a family's floor to the batch's highest max_seen instead of raising it. */
        LOWERS_FLOOR
    }

    /** The data a second instance (another process, a restart) shares: the "database". */
    static final class Data {
        final Map<String, Row> rows = new HashMap<>();
        final Map<String, Long> floors = new HashMap<>();
        final ReentrantLock lock = new ReentrantLock();
    }

    static final class Row {
        long maxSeen;
        String holder;
        long usedAt;

        Row(long maxSeen, String holder, long usedAt) {
            this.maxSeen = maxSeen;
            this.holder = holder;
            this.usedAt = usedAt;
        }
    }

    private final Data data;
    private final Flaw flaw;
    private final long maxAdvance;
    private final Map<String, Row> rows;

    MiniStore(Data data, Flaw flaw, long maxAdvance) {
        this.data = data;
        this.flaw = flaw;
        this.maxAdvance = maxAdvance;
        this.rows = flaw == Flaw.PER_INSTANCE ? new HashMap<>() : data.rows;
    }

    MiniStore(Flaw flaw) {
        this(new Data(), flaw, FenceRule.UNBOUNDED);
    }

    private String row(String resource) {
        switch (flaw) {
            case CASE_INSENSITIVE:
                return resource.toLowerCase(Locale.ROOT);
            case TRIMS:
                return resource.strip();
            case IGNORES_KEY:
                return ResourceFamily.has(resource) ? ResourceFamily.of(resource) : resource;
            default:
                return resource;
        }
    }

    @Override
    public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
        if (write == null) {
            throw new NullPointerException("MiniStore: the write for resource '" + resource + "' is null (token "
                    + token + ")");
        }
        if (resource == null) {
            throw new NullPointerException("MiniStore: the resource is null (token " + token + ")");
        }
        if (token == null) {
            throw new MissingTokenException(resource, "a check of MiniStore");
        }
        if (!resource.equals(token.resource())) {
            throw new IllegalArgumentException("Token " + token + " was issued for resource '" + token.resource()
                    + "', not for '" + resource + "'");
        }
        String key = row(resource);
        data.lock.lock();
        boolean held = true;
        try {
            Row row = rows.get(key);
            Long floor = data.floors.get(ResourceFamily.has(resource) ? ResourceFamily.of(resource) : "");
            boolean seen = row != null || floor != null;
            long maxSeen = row != null ? row.maxSeen : floor != null ? floor : 0;
            String holder = row != null ? row.holder : null;
            Verdict verdict = FenceRule.judge(seen, maxSeen, holder, token, maxAdvance);
            if (flaw == Flaw.EQUAL_ACCEPTED && verdict == Verdict.REJECT_DUPLICATE) {
                verdict = Verdict.ACCEPT_SAME_HOLDER;
            }
            if (!verdict.accepted()) {
                if (flaw == Flaw.REFUSAL_TAKES_HOLDER && verdict == Verdict.REJECT_DUPLICATE && row != null) {
                    row.holder = token.holder();
                }
                if (flaw == Flaw.ADVANCE_ON_OUT_OF_RANGE && verdict == Verdict.REJECT_OUT_OF_RANGE) {
                    rows.put(key, new Row(token.value(), token.holder(), System.nanoTime()));
                }
                if (flaw == Flaw.WRITE_ON_REFUSAL) {
                    write.proceed();
                }
                throw TokenRejectedException.of(resource, token, maxSeen, verdict);
            }
            if (verdict == Verdict.ACCEPT_NEWER) {
                if (flaw != Flaw.NEVER_ADVANCES) {
                    rows.put(key, new Row(token.value(), token.holder(), System.nanoTime()));
                }
            } else if (row != null) {
                row.usedAt = System.nanoTime();
            }
            if (flaw == Flaw.CHECK_THEN_ACT) {
                data.lock.unlock();
                held = false;
                Thread.yield();
            }
            return write.proceed();
        } finally {
            if (held) {
                data.lock.unlock();
            }
        }
    }

    @Override
    public CompactionResult compact(Duration idleFor, int batchSize, IssuerFloors issuer) {
        if (idleFor == null || idleFor.isNegative()) {
            throw new IllegalArgumentException("MiniStore.compact: idleFor must not be negative, was " + idleFor);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("MiniStore.compact: batchSize must be at least 1, was " + batchSize);
        }
        long cutoff = System.nanoTime() - idleFor.toNanos();
        List<Map.Entry<String, Row>> idle = new ArrayList<>();
        data.lock.lock();
        try {
            for (Map.Entry<String, Row> e : rows.entrySet()) {
                if (ResourceFamily.has(e.getKey()) && e.getValue().usedAt <= cutoff) {
                    idle.add(Map.entry(e.getKey(), e.getValue()));
                }
            }
        } finally {
            data.lock.unlock();
        }
        idle.sort(Comparator.comparingLong(e -> e.getValue().usedAt));
        long folded = 0;
        int batches = 0;
        java.util.Set<String> families = new java.util.HashSet<>();
        for (int from = 0; from < idle.size(); from += batchSize) {
            List<Map.Entry<String, Row>> batch = idle.subList(from, Math.min(idle.size(), from + batchSize));
            data.lock.lock();
            try {
                Map<String, Long> highest = new LinkedHashMap<>();
                List<String> fold = new ArrayList<>();
                for (Map.Entry<String, Row> e : batch) {
                    Row now = rows.get(e.getKey());
                    if (now != null && now.usedAt <= cutoff) {
                        highest.merge(ResourceFamily.of(e.getKey()), now.maxSeen, Math::max);
                        fold.add(e.getKey());
                    }
                }
                if (fold.isEmpty()) {
                    continue;
                }
                highest.forEach(issuer::raiseFamilyFloor);
                highest.forEach((family, floor) -> {
                    if (flaw == Flaw.LOWERS_FLOOR) {
                        data.floors.put(family, floor);
                    } else {
                        data.floors.merge(family, floor, Math::max);
                    }
                });
                fold.forEach(rows::remove);
                folded += fold.size();
                batches++;
                families.addAll(highest.keySet());
            } finally {
                data.lock.unlock();
            }
        }
        return folded == 0 ? CompactionResult.NONE : new CompactionResult(folded, batches, families.size());
    }

    @Override
    public OptionalLong familyFloor(String family) {
        data.lock.lock();
        try {
            Long floor = data.floors.get(family);
            return floor == null ? OptionalLong.empty() : OptionalLong.of(floor);
        } finally {
            data.lock.unlock();
        }
    }
}
