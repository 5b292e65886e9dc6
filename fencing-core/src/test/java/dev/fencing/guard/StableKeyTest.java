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

import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Item 1: only key values with a stable text name an entity; everything else is refused and counted invalid. */
class StableKeyTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FencingMetrics metrics = new FencingMetrics(registry);
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final FenceGuard guard = new FenceGuard(store);
    private final FencePoint point = new FencePoint("Repo.save(Object)", "accounts", args -> args[0], "#entity",
            false, metrics);

    @AfterEach
    void nothingLeaks() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    private double checks(String outcome) {
        var c = registry.find("fencing.checks").tag("resource", "accounts").tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    /** An entity that relies on Object's identity text. */
    /** A class without toString() whose one property is v. */
    public static class Boxed {
        public long getV() {
            return 1;
        }
    }

    record Slots(long[] ids) {
    }

    record SlotsOfShelf(long[] ids, long shelf) {
    }

    static class Account {
        final long id;

        Account(long id) {
            this.id = id;
        }
    }

    /** What a runtime proxy library generates for it: a subclass that declares toString() and delegates. */
    static class Account$$Generated extends Account {
        Account$$Generated(long id) {
            super(id);
        }

        @Override
        public String toString() {
            return super.toString();
        }
    }

    /** A value type with its own text, and a subclass that inherits it. */
    static class Iban {
        final String number;

        Iban(String number) {
            this.number = number;
        }

        @Override
        public String toString() {
            return number;
        }
    }

    static final class DomesticIban extends Iban {
        DomesticIban(String number) {
            super(number);
        }
    }

    /** An entity that names itself, and whose toString would be a poor key. */
    static final class Customer implements FencingKey {
        final long id;
        final String name;

        Customer(long id, String name) {
            this.id = id;
            this.name = name;
        }

        @Override
        public String fencingKey() {
            return "c" + id;
        }

        @Override
        public String toString() {
            return "Customer[" + name + ", visited " + System.nanoTime() + "]";
        }
    }

    record Shipment(String warehouse, int parcel) {
    }

    enum Region { EU, US }

    static Stream<Object[]> stable() {
        UUID uuid = UUID.randomUUID();
        return Stream.of(
                new Object[] {"42", "42"},
                new Object[] {42L, String.valueOf(42L)},
                new Object[] {7, String.valueOf(7)},
                new Object[] {-12, "-12"},
                new Object[] {Long.MIN_VALUE, "-9223372036854775808"},
                new Object[] {Integer.MAX_VALUE, "2147483647"},
                new Object[] {'c', "c"},
                new Object[] {true, String.valueOf(true)},
                new Object[] {new BigDecimal("1.50"), "1.5"},
                new Object[] {uuid, uuid.toString()},
                new Object[] {Region.EU, Region.EU.toString()},
                new Object[] {TimeUnit.SECONDS, TimeUnit.SECONDS.toString()},
                new Object[] {LocalDate.of(2026, 1, 31), LocalDate.of(2026, 1, 31).toString()},
                new Object[] {new Shipment("north", 11), new Shipment("north", 11).toString()},
                new Object[] {new StringBuilder("sb"), "sb"},
                new Object[] {new Iban("DE89"), "DE89"},
                new Object[] {new DomesticIban("DE12"), "DE12"},
                new Object[] {new Customer(5, "Ann"), "c5"});
    }

    @ParameterizedTest
    @MethodSource("stable")
    void aValueWithAStableTextNamesItsEntity(Object key, String text) throws Throwable {
        FencingToken token = new FencingToken("accounts:" + text, 1, "h");
        assertThat(bound(token, () -> guard.invoke(point, new Object[] {key}, () -> "saved"))).isEqualTo("saved");
        assertThat(store.maxSeen("accounts:" + text)).hasValue(1);
        assertThat(checks("accepted")).isEqualTo(1);
    }

    /** The refusal's example of an identity text is the refused type's own, not a fixed class name. */
    @Test
    void theRefusalOfAnIdentityTextNamesTheRefusedType() {
        class Thing {
        }
        assertThat(KeyValues.refusal(Thing.class)).contains("such as Thing@1b2c");
        Object anonymous = new Object() {
        };
        assertThat(KeyValues.refusal(anonymous.getClass())).contains("such as " + anonymous.getClass().getName()
                + "@1b2c");
    }

    @Test
    void aNumberKeyThatMakesTheEffectiveResourceTooLongIsRefusedLikeAnyOtherKey() throws Throwable {
        String resource = "r".repeat(FencingToken.MAX_PART_LENGTH - 6); // room for ':' and five digits
        FencePoint near = new FencePoint("Repo.save(long)", resource, args -> args[0], "#id", false,
                new dev.fencing.metrics.FencingMetrics(null));
        assertThat(near.effectiveResource(new Object[] {12345L})).isEqualTo(resource + ":12345");
        assertThat(near.effectiveResource(new Object[] {-1234})).isEqualTo(resource + ":-1234");
        assertThatThrownBy(() -> near.effectiveResource(new Object[] {123456L}))
                .isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("Repo.save(long)").hasMessageContaining("longer than the limit of 256");
    }

    @Test
    void aNumberKeyOfAResourceWithoutRoomForEveryNumberIsMatchedAsItsText() throws Throwable {
        String resource = "r".repeat(FencingToken.MAX_PART_LENGTH - 6);
        FencePoint near = new FencePoint("Repo.save(long)", resource, args -> args[0], "#id", false, metrics);
        FencingToken token = new FencingToken(resource + ":12345", 3, "h");
        assertThat(bound(token, () -> guard.invoke(near, new Object[] {12345L}, () -> "saved"))).isEqualTo("saved");
        assertThat(bound(token, () -> guard.invoke(near, new Object[] {12345}, () -> "saved"))).isEqualTo("saved");
        assertThatThrownBy(() -> bound(token, () -> guard.invoke(near, new Object[] {12346L}, () -> "saved")))
                .isInstanceOf(dev.fencing.context.MissingTokenException.class).hasMessageContaining(":12346");
        assertThat(store.maxSeen(resource + ":12345")).hasValue(3);
    }

    @Test
    void theKeyIsComputedOncePerCallOnTheGuardAndTheBracketAlsoWhenNoTokenIsBound() throws Throwable {
        java.util.concurrent.atomic.AtomicInteger evaluations = new java.util.concurrent.atomic.AtomicInteger();
        FencePoint counting = new FencePoint("Repo.save(long)", "accounts", args -> {
            evaluations.incrementAndGet();
            return args[0];
        }, "#id", false, metrics);
        FencingToken token = new FencingToken("accounts:7", 1, "h");
        bound(token, () -> guard.invoke(counting, new Object[] {7L}, () -> "saved"));
        assertThat(evaluations).hasValue(1);
        assertThatThrownBy(() -> guard.invoke(counting, new Object[] {7L}, () -> "saved"))
                .isInstanceOf(dev.fencing.context.MissingTokenException.class).hasMessageContaining("accounts:7");
        assertThat(evaluations).hasValue(2);
        FenceBracket bracket = guard.bracket(counting);
        assertThat(bound(token, () -> bracket.token(new Object[] {7L}))).isSameAs(token);
        assertThat(evaluations).hasValue(3);
        assertThatThrownBy(() -> bracket.token(new Object[] {8L}))
                .isInstanceOf(dev.fencing.context.MissingTokenException.class).hasMessageContaining("accounts:8");
        assertThat(evaluations).hasValue(4);
    }

    static Stream<Object[]> unstable() {
        Object proxy = Proxy.newProxyInstance(StableKeyTest.class.getClassLoader(), new Class<?>[] {Runnable.class},
                (p, m, a) -> m.getName().equals("toString") ? "proxy" : null);
        return Stream.of(
                new Object[] {new Object[] {1L, 2L}, "java.lang.Object[]"},
                new Object[] {new long[] {1L}, "long[]"},
                new Object[] {new Account(1), Account.class.getName()},
                new Object[] {new Account$$Generated(1), Account$$Generated.class.getName()},
                new Object[] {new Object(), "java.lang.Object"},
                new Object[] {List.of(1L), List.of(1L).getClass().getName()},
                new Object[] {new ArrayList<>(List.of(1L)), "java.util.ArrayList"},
                new Object[] {Map.of("id", 1L), Map.of("id", 1L).getClass().getName()},
                new Object[] {Optional.of(1L), "java.util.Optional"},
                new Object[] {proxy, proxy.getClass().getName()},
                new Object[] {(Runnable) () -> { }, "Lambda"},
                new Object[] {-0.0d, "java.lang.Double"},
                new Object[] {1.5f, "java.lang.Float"});
    }

    @ParameterizedTest
    @MethodSource("unstable")
    void aValueWithoutAStableTextIsRefusedNamingMethodKeyAndType(Object key, String type) {
        double before = checks("invalid");
        List<String> ran = new ArrayList<>();
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {key}, () -> ran.add("x")))
                .isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("Repo.save(Object)").hasMessageContaining("'#entity'")
                .hasMessageContaining(type)
                .hasMessageContaining(key instanceof Double || key instanceof Float ? "0.0 and -0.0"
                        : KeyValues.example(key.getClass(), "#entity") == null ? "stable text inside it"
                        : "e.g. '" + KeyValues.example(key.getClass(), "#entity") + "'")
                .hasMessageContaining(key instanceof Double || key instanceof Float ? "key on an integer"
                        : FencingKey.class.getSimpleName());
        assertThat(ran).isEmpty();
        assertThat(store.size()).isZero();
        assertThat(checks("invalid")).isEqualTo(before + 1);
        assertThat(checks("missing") + checks("accepted")).isZero();
    }

    static Stream<Object> blank() {
        return Stream.of("", "   ", new StringBuilder(" "), new BlankKey(null), new BlankKey(""), new Iban("\t"));
    }

    /** A FencingKey whose text is missing. */
    record BlankKey(String key) implements FencingKey {
        @Override
        public String fencingKey() {
            return key;
        }
    }

    @ParameterizedTest
    @MethodSource("blank")
    void aNullOrBlankKeyTextIsRefused(Object key) {
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {key}, () -> "x"))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("Repo.save(Object)")
                .hasMessageContaining(key.getClass().getTypeName());
        assertThat(checks("invalid")).isEqualTo(1);
        assertThat(store.size()).isZero();
    }

    @Test
    void aFencingKeyWinsOverToString() throws Throwable {
        Customer ann = new Customer(5, "Ann");
        FencingToken token = new FencingToken("accounts:" + ann.fencingKey(), 3, "h");
        bound(token, () -> guard.invoke(point, new Object[] {ann}, () -> "a"));
        bound(token, () -> guard.invoke(point, new Object[] {new Customer(5, "Ann, renamed")}, () -> "b"));
        assertThat(checks("accepted")).isEqualTo(2);
        assertThat(store.size()).isEqualTo(1); // one entity, one resource, whatever toString says
    }

    /** An enum whose text is its name, and one whose constant overrides toString(): refused, naming the fix. */
    enum Plan {
        BASIC,
        GOLD {
            @Override
            public String toString() {
                return "plan-gold";
            }
        }
    }

    /** An enum that overrides toString() for every constant: refused when declared as the parameter's type. */
    enum Shown {
        ONE;

        @Override
        public String toString() {
            return "one";
        }
    }

    /**
     * An enum key's text is its name, which a lock taken elsewhere by name (FencedLockRegistry) also uses; a constant
     * whose toString() says something else is refused rather than fenced under that other text (a new user's trial
     * locked GOLD through one path and checked 'plan-gold' through the other).
     */
    @Test
    void anEnumKeyIsItsNameAndAConstantThatRenamesItselfIsRefused() throws Throwable {
        FencingToken basic = new FencingToken("accounts:BASIC", 3, "h");
        bound(basic, () -> guard.invoke(point, new Object[] {Plan.BASIC}, () -> "a"));
        assertThat(checks("accepted")).isEqualTo(1);
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {Plan.GOLD}, () -> "x"))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("toString() is overridden")
                .hasMessageContaining("'#entity.name()'");
        assertThatThrownBy(() -> KeyValues.checkParameterType(Shown.class, "Repo.save(Shown)", "#shown"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("under a name other than its own").hasMessageContaining("'#shown.name()'");
        KeyValues.checkParameterType(Plan.class, "Repo.save(Plan)", "#plan"); // its constants are read per call
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void declaredParameterTypesThatCanNeverHaveAStableTextFailAtStartup() {
        for (Class<?> refused : List.of(Object[].class, long[].class, Account.class, List.class, ArrayList.class,
                Map.class, Optional.class, double.class, Double.class, float.class, Float.class)) {
            assertThatThrownBy(() -> KeyValues.checkParameterType(refused, "Repo.save(X)", "#x"))
                    .as(refused.getTypeName())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Repo.save(X)").hasMessageContaining("'#x'")
                    .hasMessageContaining(refused.getTypeName());
        }
        // the suggested key fits the type: an element, the optional's value, a map entry, else a property
        assertThat(KeyValues.example(long[].class, "#ids")).isEqualTo("#ids[0]");
        assertThat(KeyValues.example(ArrayList.class, "#ids")).isEqualTo("#ids[0]");
        assertThat(KeyValues.example(Optional.class, "#o")).isEqualTo("#o.get()");
        assertThat(KeyValues.example(Map.class, "#m")).isEqualTo("#m['id']");
        assertThat(KeyValues.example(Account.class, "#account")).isEqualTo("#account.id");
        // a new user's trial was told to key on '#id.id' of a class with no such property, and '#ref.id' of a
        // record whose one component is an array: a message names only what the class has
        assertThat(KeyValues.example(Boxed.class, "#id")).isEqualTo("#id.v");
        assertThat(KeyValues.example(Object.class, "#o")).isNull();
        assertThat(KeyValues.remedy(Slots.class, "#ref")).doesNotContain("e.g.").contains("or implement "
                + FencingKey.class.getName() + " on Slots");
        assertThat(KeyValues.remedy(SlotsOfShelf.class, "#ref")).contains("e.g. '#ref.shelf'");
        assertThat(KeyValues.refusal(Slots.class)).contains("[J@1b2c").doesNotContain("Ljava.lang.Object");
        assertThatThrownBy(() -> KeyValues.checkParameterType(List.class, "Repo.save(X)", "#x"))
                .hasMessageContaining("one entity could be fenced under several resources")
                .hasMessageContaining("A batch of entities is fenced one entity per call")
                .hasMessageContaining("e.g. '#x[0]'");
        assertThatThrownBy(() -> KeyValues.checkParameterType(double.class, "Repo.save(X)", "#x"))
                .hasMessageContaining("one entity could be fenced as two resources")
                .hasMessageNotContaining("every call would fence a different resource");
        // a value still to come: its holder's text, never the entity's (a reactive key reads Mono<Long> as MonoJust)
        for (Class<?> later : List.of(CompletableFuture.class, Future.class, CompletionStage.class, Stream.class,
                LongStream.class, Iterator.class, Flow.Publisher.class, SubmissionPublisher.class)) {
            assertThatThrownBy(() -> KeyValues.checkParameterType(later, "Repo.save(X)", "#x"))
                    .as(later.getTypeName())
                    .isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("Repo.save(X)").hasMessageContaining(later.getTypeName())
                    .hasMessageContaining("a value still to come").hasMessageContaining("Take the value itself")
                    .hasMessageContaining("calls for different entities would fence one resource")
                    .hasMessageNotContaining("every call would fence a different resource");
        }
        assertThat(KeyValues.textOf(CompletableFuture.completedFuture(7L))).isNull();
        for (Class<?> open : List.of(long.class, Long.class, String.class, CharSequence.class, Object.class,
                Runnable.class, Number.class, UUID.class, Region.class, Shipment.class, Iban.class, Customer.class,
                LocalDate.class, FencingKey.class)) {
            assertThatCode(() -> KeyValues.checkParameterType(open, "Repo.save(X)", "#x")).as(open.getTypeName())
                    .doesNotThrowAnyException();
        }
    }
}
