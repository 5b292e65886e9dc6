package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.FencingKey;
import dev.fencing.context.FencingContext;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A record's text is made of its components' texts ({@code ShelfRef[slots=[J@1b2c]}), so a record key is judged by
 * its components, recursively: refused at startup when a component's declared type can never have a stable text,
 * looked at per call when a component is declared open ({@code Object}, an interface, a non-final class), and
 * accepted as it is otherwise. Before, any record was accepted, and two holders of one entity each fenced a resource
 * of their own, both accepted.
 */
class RecordKeyTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final FenceGuard guard = new FenceGuard(store);
    private final FencePoint point = new FencePoint("Repo.save(Object)", "shelves", args -> args[0], "#ref",
            false, new FencingMetrics(registry));

    @AfterEach
    void nothingLeaks() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private double checks(String outcome) {
        var c = registry.find("fencing.checks").tag("resource", "shelves").tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    /** An entity with Object's identity text. */
    static final class Shelf {
        final long id;

        Shelf(long id) {
            this.id = id;
        }
    }

    enum Aisle { NORTH, SOUTH }

    record Slots(long[] slots) {
    }

    record Held(Shelf shelf) {
    }

    record Weighed(double kg) {
    }

    record Boxed(Float kg) {
    }

    record Listed(List<Long> ids) {
    }

    record Pending(CompletableFuture<Long> id) {
    }

    /** Refused for a component of a component. */
    record Outer(String site, Slots inner) {
    }

    record Place(String site, long shelf, Aisle aisle) {
    }

    record Route(Place from, Place to, long cents) {
    }

    /** Its component's text is not its key text: {@code 1} and {@code 1.00}, one amount. */
    record Priced(String site, BigDecimal cost) {
    }

    /** Its component is declared open: its value decides, per call. */
    record Ref(Object id) {
    }

    record Chain(Object value, Chain next) {
    }

    /** Its own key text: the components do not matter. */
    record Keyed(long[] slots) implements FencingKey {
        @Override
        public String fencingKey() {
            return "slots-" + slots.length;
        }
    }

    static Stream<Object[]> stable() {
        Place north = new Place("berlin", 7, Aisle.NORTH);
        Place south = new Place("berlin", 9, Aisle.SOUTH);
        return Stream.of(
                new Object[] {north, north.toString()},
                new Object[] {new Route(north, south, 150), new Route(north, south, 150).toString()},
                new Object[] {new Ref(7L), "Ref[id=7]"},
                new Object[] {new Ref("7"), "Ref[id=7]"},
                new Object[] {new Ref(north), "Ref[id=" + north + "]"},
                new Object[] {new Chain(1L, new Chain("two", null)),
                        "Chain[value=1, next=Chain[value=two, next=null]]"},
                new Object[] {new Keyed(new long[] {1, 2}), "slots-2"});
    }

    /** Records whose components all have a stable text: the same entity, the same text, from any instance. */
    @ParameterizedTest
    @MethodSource("stable")
    void aRecordOfStableComponentsNamesItsEntity(Object key, String text) throws Throwable {
        assertThat(KeyValues.textOf(key)).isEqualTo(text);
        FencingToken token = new FencingToken("shelves:" + text, 1, "h");
        assertThat(bound(token, () -> guard.invoke(point, new Object[] {key}, () -> "saved"))).isEqualTo("saved");
        assertThat(checks("accepted")).isEqualTo(1);
    }

    static Stream<Object[]> unstable() {
        return Stream.of(
                new Object[] {new Slots(new long[] {7}), "a record whose component slots is an array"},
                new Object[] {new Held(new Shelf(7)), "a record whose component shelf is a class that does not "
                        + "override toString(), so its text (such as Shelf@1b2c)"},
                new Object[] {new Weighed(0.0), "a record whose component kg is a floating-point number"},
                new Object[] {new Boxed(-0.0f), "a record whose component kg is a floating-point number"},
                new Object[] {new Listed(List.of(7L)), "a record whose component ids is a collection"},
                new Object[] {new Pending(CompletableFuture.completedFuture(7L)),
                        "a record whose component id is a value still to come"},
                new Object[] {new Outer("berlin", new Slots(new long[] {7})),
                        "a record whose component inner is a record whose component slots is an array"},
                new Object[] {new Ref(new long[] {7}), "a record whose component id (long[]) is an array"},
                new Object[] {new Priced("berlin", BigDecimal.ONE), "a record whose component cost is a BigDecimal, "
                        + "whose text tells apart values that compare equal (1 and 1.00)"},
                new Object[] {new Ref(new BigDecimal("1.00")), "a record whose component id (BigDecimal) is a "
                        + "BigDecimal, whose text tells apart values that compare equal"},
                new Object[] {new Ref(new Shelf(7)), "a record whose component id (Shelf) is a class that does not "
                        + "override toString()"},
                new Object[] {new Ref(new ArrayList<>(List.of(7L))), "a record whose component id (ArrayList) is a "
                        + "collection"},
                new Object[] {new Ref(new Ref(1.5d)), "a record whose component id (Ref) is a record whose "
                        + "component id (Double) is a floating-point number"},
                new Object[] {new Chain(1L, new Chain(new Shelf(2), null)), "a record whose component next (Chain) "
                        + "is a record whose component value (Shelf) is a class that does not override toString()"});
    }

    /**
     * A record whose text would name the instance (an array, an identity-text object), or tell apart values that are
     * equal (a floating-point number), or depend on elements, is refused on each call: nothing runs, counted invalid.
     */
    @ParameterizedTest
    @MethodSource("unstable")
    void aRecordWithAComponentWithoutAStableTextIsRefused(Object key, String why) {
        assertThat(KeyValues.textOf(key)).isNull();
        List<String> ran = new ArrayList<>();
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {key}, () -> ran.add("x")))
                .isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("Repo.save(Object)").hasMessageContaining("'#ref'")
                .hasMessageContaining(key.getClass().getTypeName())
                .hasMessageContaining(why)
                .hasMessageContaining("implement " + FencingKey.class.getName() + " on "
                        + key.getClass().getSimpleName());
        assertThat(ran).isEmpty();
        assertThat(store.size()).isZero();
        assertThat(checks("invalid")).isEqualTo(1);
    }

    /** Two holders of one shelf, each with a record of its own: before, two texts, two resources, both accepted. */
    @Test
    void twoInstancesOfOneRecordNeverNameTwoResources() {
        assertThat(KeyValues.textOf(new Slots(new long[] {7}))).isNull();
        assertThat(KeyValues.textOf(new Held(new Shelf(7)))).isNull();
        assertThat(KeyValues.textOf(new Ref(new Shelf(7)))).isNull();
        assertThat(KeyValues.textOf(new Ref(7L))).isEqualTo(KeyValues.textOf(new Ref(7L)));
    }

    /**
     * A key that is one parameter of a record type is judged at startup when a component's declared type can never
     * have a stable text, naming the component and a component to key on; a record with components declared open
     * is judged per call, and one of stable components or with a key text of its own passes.
     */
    @Test
    void aRecordParameterWhoseComponentsCanNeverHaveAStableTextFailsAtStartup() {
        for (Class<?> refused : List.of(Slots.class, Held.class, Weighed.class, Boxed.class, Listed.class,
                Pending.class, Outer.class, Priced.class)) {
            assertThatThrownBy(() -> KeyValues.checkParameterType(refused, "Repo.save(X)", "#x"))
                    .as(refused.getTypeName())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Repo.save(X)").hasMessageContaining("'#x'")
                    .hasMessageContaining(refused.getTypeName())
                    .hasMessageContaining("a record whose component ")
                    .hasMessageContaining("implement " + FencingKey.class.getName() + " on "
                            + refused.getSimpleName());
        }
        assertThatThrownBy(() -> KeyValues.checkParameterType(Slots.class, "Repo.save(Slots)", "#x"))
                .hasMessageContaining("every call would fence a different resource");
        assertThatThrownBy(() -> KeyValues.checkParameterType(Weighed.class, "Repo.save(Weighed)", "#x"))
                .hasMessageContaining("one entity could be fenced as two resources");
        assertThatThrownBy(() -> KeyValues.checkParameterType(Outer.class, "Repo.save(Outer)", "#x"))
                .hasMessageContaining("e.g. '#x.site'");
        for (Class<?> passes : List.of(Place.class, Route.class, Ref.class, Chain.class, Keyed.class)) {
            assertThatCode(() -> KeyValues.checkParameterType(passes, "Repo.save(X)", "#x")).as(passes.getTypeName())
                    .doesNotThrowAnyException();
        }
    }
}
