package dev.fencing.store.sql;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** One creation per floor key at a time, none once it exists, and a failed one tried again only after its delay. */
@Timeout(10)
class FloorRowsTest {

    /** The creations started, each finished by the test. */
    private final List<Started> started = new ArrayList<>();

    private record Started(String floorKey, Runnable created, Consumer<Throwable> failed) {
    }

    private FloorRows rows(long retryNanos) {
        return rows(retryNanos, FloorRows.REFRESH_NANOS);
    }

    private FloorRows rows(long retryNanos, long refreshNanos) {
        return new FloorRows("t", (key, created, failed) -> started.add(new Started(key, created, failed)),
                retryNanos, refreshNanos);
    }

    @Test
    void aFloorKeyIsCreatedOnceThenKnown() {
        FloorRows rows = rows(FloorRows.RETRY_NANOS);
        rows.ensure("orders\u001f");
        rows.ensure("orders\u001f"); // pending: not started again
        assertThat(started).extracting(Started::floorKey).containsExactly("orders\u001f");
        assertThat(rows.exists("orders\u001f")).isFalse();

        started.get(0).created().run();
        assertThat(rows.exists("orders\u001f")).isTrue();
        rows.ensure("orders\u001f");
        rows.ensure("accounts\u001f");
        assertThat(started).extracting(Started::floorKey).containsExactly("orders\u001f", "accounts\u001f");
    }

    @Test
    void aFailedCreationIsTriedAgainOnlyAfterTheRetryDelay() {
        FloorRows patient = rows(TimeUnit.HOURS.toNanos(1));
        patient.ensure("orders\u001f");
        started.get(0).failed().accept(new IllegalStateException("database down"));
        patient.ensure("orders\u001f");
        assertThat(started).hasSize(1);
        assertThat(patient.exists("orders\u001f")).isFalse();

        started.clear();
        FloorRows eager = rows(0);
        eager.ensure("orders\u001f");
        started.get(0).failed().accept(new IllegalStateException("database down"));
        eager.ensure("orders\u001f");
        assertThat(started).hasSize(2);
        started.get(1).created().run();
        assertThat(eager.exists("orders\u001f")).isTrue();
    }

    @Test
    void aRowKnownToExistIsMadeSureOfAgainAfterTheRefreshDelay() {
        FloorRows rows = rows(FloorRows.RETRY_NANOS, 0);
        rows.ensure("orders\u001f");
        started.get(0).created().run();
        rows.ensure("orders\u001f"); // refresh 0: due again at once (a row deleted by hand comes back)
        assertThat(started).hasSize(2);
        assertThat(rows.exists("orders\u001f")).as("pending again").isFalse();
        started.get(1).created().run();
        assertThat(rows.exists("orders\u001f")).isTrue();
    }

    @Test
    void aCreatorThatThrowsLeavesTheCheckAlone() {
        FloorRows rows = new FloorRows("t", (key, created, failed) -> {
            throw new IllegalStateException("executor gone");
        }, 0, 0);
        assertThatCode(() -> rows.ensure("orders\u001f")).doesNotThrowAnyException();
        assertThat(rows.exists("orders\u001f")).isFalse();
    }

    @Test
    void itForgetsEverythingPastItsLimitRatherThanGrow() {
        FloorRows rows = rows(FloorRows.RETRY_NANOS);
        for (int i = 0; i < FloorRows.REMEMBERED; i++) {
            rows.ensure("f" + i + "\u001f");
            started.get(i).created().run();
        }
        assertThat(rows.exists("f0\u001f")).isTrue();
        rows.ensure("one-more\u001f");
        assertThat(rows.exists("f0\u001f")).isFalse();
        rows.ensure("f0\u001f");
        assertThat(started).hasSize(FloorRows.REMEMBERED + 2);
    }
}
