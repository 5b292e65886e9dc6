package dev.fencing.boot.actuate;

import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FenceAdmin;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /actuator/fencing} {@code {"afterRestore": true}} stopped half-way by a fence row held past the store's
 * lock timeout: a 409 that names the resource and says that what was raised stays raised and to run it again, not
 * a bare 500 from the framework with the operator left to guess what changed.
 */
@Timeout(30)
class FloorRaiseStoppedHalfWayTest {

    /** A store's busy failure, as the JDBC store's {@code FenceBusyException}. */
    private static final class Busy extends RuntimeException implements TransientFenceFailure {
        private final String resource;

        Busy(String resource) {
            super("Floor raise of resource '" + resource + "' to 9: its fence row stayed held by another transaction "
                    + "for more than the store's lock timeout of 300 ms; nothing changed, try again");
            this.resource = resource;
        }

        @Override
        public Reason reason() {
            return Reason.BUSY;
        }

        @Override
        public String resource() {
            return resource;
        }

        @Override
        public FencingToken presented() {
            return null;
        }
    }

    @Test
    void aRaiseStoppedByABusyRowAnswers409NamingItAndWhatToDo() throws Throwable {
        InMemoryFenceStore store = new InMemoryFenceStore();
        for (String resource : new String[] {"a", "b", "c"}) {
            store.fence(resource, new FencingToken(resource, 1, "h"), () -> null);
        }
        FenceAdmin busyOnB = new FenceAdmin() {
            @Override
            public OptionalLong maxSeen(String resource) {
                return store.maxSeen(resource);
            }

            @Override
            public void raiseFloor(String resource, long value) {
                if (resource.equals("b")) {
                    throw new Busy(resource);
                }
                store.raiseFloor(resource, value);
            }

            @Override
            public long lowerMaxSeen(String resource, long floor) {
                return store.lowerMaxSeen(resource, floor);
            }
        };
        AdminMetrics metrics = new AdminMetrics(new SimpleMeterRegistry());
        FencingAdminWebExtension extension = new FencingAdminWebExtension(new MaxSeenReset(store, null, metrics),
                new FloorRaise(busyOnB, store, null, metrics), null);
        WebEndpointResponse<Map<String, Object>> answer = extension.raiseFloors(true, 9L, null);
        assertThat(answer.getStatus()).isEqualTo(409);
        assertThat((String) answer.getBody().get("error")).contains("'b'").contains("stay raised")
                .contains("run it again");
        assertThat(store.maxSeen("a")).hasValue(9);
        assertThat(store.maxSeen("c")).hasValue(1);
    }
}
