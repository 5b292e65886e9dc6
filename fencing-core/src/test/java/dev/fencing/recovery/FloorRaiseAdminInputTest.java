package dev.fencing.recovery;

import dev.fencing.metrics.AdminMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The floor raise's administrative edges: a named resource or family no token can name is bad input refused before
 * anything changes.
 */
@Timeout(30)
class FloorRaiseAdminInputTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryFenceStore store = new InMemoryFenceStore();

    private void write(String resource, long value) throws Throwable {
        store.fence(resource, new FencingToken(resource, value, "h"), () -> null);
    }

    /**
     * A named resource with a control character (a pasted line break, a NUL) names no resource a token can reach:
     * before, every listed resource was raised first and the bad name got a row of its own (or, on PostgreSQL, failed
     * the run with a database error after the rest had changed). Refused as bad input, nothing changed.
     */
    @Test
    void aNamedResourceOrFamilyWithAControlCharacterIsRefusedBeforeAnythingChanges() throws Throwable {
        write("a", 5);
        FloorRaise raise = new FloorRaise(store, store, null, new AdminMetrics(registry));
        assertThatThrownBy(() -> raise.raiseAll(9, "ops", List.of("ledger\n"), List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character").hasMessageContaining("index 6");
        assertThatThrownBy(() -> raise.raiseAll(9, "ops", List.of(), List.of("acc\u0000ounts")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("control character").hasMessageContaining("index 3");
        assertThat(store.maxSeen("a")).hasValue(5);
        assertThat(store.resources(null, 10)).containsExactly("a");
    }
}
