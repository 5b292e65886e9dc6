package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A bean calling its own {@code @Fenced} method goes around the Spring proxy, so that call is not fenced: PROXY mode
 * fails startup naming the caller and the callee, found in the bean's bytecode.
 */
class SelfInvocationTest {

    static class Ledger {
        public void post(String entry) {
            append(entry); // around the proxy
        }

        public Supplier<String> later(String entry) {
            return () -> {
                append(entry); // in a lambda: around the proxy too
                return entry;
            };
        }

        @Fenced(resource = "ledger")
        public void append(String entry) {
        }
    }

    /** Overloads: the message has to say which {@code append} calls which. */
    static class Overloads {
        public void append(String entry) {
            append(entry, 1); // the unfenced overload delegating to the fenced one, around the proxy
        }

        @Fenced(resource = "ledger")
        public void append(String entry, int times) {
        }

        public void post(String entry) {
        }

        public void post(String entry, long[] amounts) {
            Consumer<String> append = this::append; // bound to the bean: the one-argument overload, unfenced
            append.accept(entry);
            append(entry, amounts.length);
        }
    }

    /** Shapes a new user's trial found running unfenced: a method reference, an anonymous and a local class. */
    static class Hidden {
        public void byReference(String entry) {
            Consumer<String> append = this::append; // bound to the bean, unproxied
            append.accept(entry);
        }

        public void byAnonymousClass(String entry) {
            new Runnable() {
                @Override
                public void run() {
                    append(entry); // Hidden.this: the bean, unproxied
                }
            }.run();
        }

        public void byLocal(String entry) {
            Hidden me = this; // a local that only ever holds the bean
            me.append(entry);
        }

        public void byLocalClassLambda(String entry) {
            class Later {
                Runnable task() {
                    return () -> append(entry); // a lambda in a local class, still Hidden.this
                }
            }
            new Later().task().run();
        }

        @Fenced(resource = "ledger")
        public void append(String entry) {
        }
    }

    interface Writer {
        void write(String entry);

        default void entry(String entry) {
            write(entry.trim()); // this is the bean, unproxied: the proxy runs default methods on its target
        }
    }

    static class DefaultMethodWriter implements Writer {
        @Fenced(resource = "ledger")
        @Override
        public void write(String entry) {
        }
    }

    interface Batch<T> {
        void put(T value);

        default void putTwice(T value) {
            put(value); // put(Object): the fenced put(String) through the bean's bridge method
            put(value);
        }
    }

    static class GenericWriter implements Batch<String> {
        @Fenced(resource = "ledger")
        @Override
        public void put(String value) {
        }
    }

    /** A repository-like interface whose bean is a JDK proxy of it (a Spring Data repository's shape). */
    interface RepositoryLike {
        @Fenced(resource = "ledger")
        void add(String entry);

        default void addTwice(String entry) {
            add(entry);
            add(entry);
        }
    }

    static class Base {
        public void entry(String value) {
            write(value);
        }

        public void write(String value) {
        }
    }

    /** Its base's entry calls write on this, and the bean runs that entry: reported. */
    static class CallsBaseEntry extends Base {
        @Fenced(resource = "ledger")
        @Override
        public void write(String value) {
        }

        @Override
        public void entry(String value) {
            super.entry(value.trim());
        }
    }

    /** Overrides the inherited methods that call write on this, so they never run on the bean: not reported. */
    static class OverridesTheCallers extends Base implements Batch<String> {
        OverridesTheCallers self;

        @Fenced(resource = "ledger")
        @Override
        public void write(String value) {
        }

        @Override
        public void entry(String value) {
            self.write(value);
        }

        @Fenced(resource = "ledger")
        @Override
        public void put(String value) {
        }

        @Override
        public void putTwice(String value) {
            self.put(value);
        }
    }

    /** Through its own proxy, by reference and from an anonymous class: not reported. */
    static class SelfInjectedShapes {
        SelfInjectedShapes self;

        public void byReference(List<String> entries) {
            entries.forEach(self::append);
        }

        public void byLocal(String entry, boolean proxied) {
            SelfInjectedShapes me = self;
            me.append(entry);
            SelfInjectedShapes either = proxied ? self : this; // not certainly the bean: not reported
            either.append(entry);
        }

        public void byAnonymousClass(String entry) {
            new Runnable() {
                @Override
                public void run() {
                    self.append(entry);
                }
            }.run();
        }

        @Fenced(resource = "ledger")
        public void append(String entry) {
        }
    }

    static class BaseRepository {
        @Fenced(resource = "base")
        public void save(String value) {
        }
    }

    /** Overrides a fenced method and calls super: the outer call was fenced, nothing is reported. */
    static class DerivedRepository extends BaseRepository {
        @Override
        public void save(String value) {
            super.save(value.trim());
        }
    }

    /** The usual remedy: calls through an injected reference to its own proxy. Not reported. */
    static class SelfInjected {
        SelfInjected self;

        public void post(String entry) {
            self.append(entry.isBlank() ? "-" : entry);
        }

        @Fenced(resource = "ledger")
        public void append(String entry) {
        }
    }

    static class Caller {
        private final BaseRepository repository;

        Caller(BaseRepository repository) {
            this.repository = repository;
        }

        public void run() {
            repository.save("x"); // through the other bean's proxy: fine
        }
    }

    @Configuration
    @EnableFencing
    static class SelfCalling {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Ledger ledger() {
            return new Ledger();
        }
    }

    @Configuration
    @EnableFencing
    static class OverloadedCalls {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Overloads overloads() {
            return new Overloads();
        }
    }

    @Configuration
    @EnableFencing
    static class HiddenShapes {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        Hidden hidden() {
            return new Hidden();
        }

        @Bean
        DefaultMethodWriter writer() {
            return new DefaultMethodWriter();
        }

        @Bean
        GenericWriter genericWriter() {
            return new GenericWriter();
        }

        @Bean
        CallsBaseEntry callsBaseEntry() {
            return new CallsBaseEntry();
        }

        @Bean
        RepositoryLike repositoryLike() {
            return (RepositoryLike) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {RepositoryLike.class}, (proxy, method, args) -> null);
        }
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true) // as Spring Boot's default: OverridesTheCallers has an interface
    static class CallsThroughOtherBeans {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        DerivedRepository repository() {
            return new DerivedRepository();
        }

        @Bean
        Caller caller(DerivedRepository repository) {
            return new Caller(repository);
        }

        @Bean
        SelfInjected selfInjected(@org.springframework.context.annotation.Lazy SelfInjected self) {
            SelfInjected bean = new SelfInjected();
            bean.self = self;
            return bean;
        }

        @Bean
        OverridesTheCallers overridesTheCallers(@org.springframework.context.annotation.Lazy OverridesTheCallers self) {
            OverridesTheCallers bean = new OverridesTheCallers();
            bean.self = self;
            return bean;
        }

        @Bean
        SelfInjectedShapes selfInjectedShapes(@org.springframework.context.annotation.Lazy SelfInjectedShapes self) {
            SelfInjectedShapes bean = new SelfInjectedShapes();
            bean.self = self;
            return bean;
        }
    }

    @Test
    void aBeanCallingItsOwnFencedMethodFailsStartupNamingBothEnds() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(SelfCalling.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("SelfInvocationTest.Ledger.post(..) calls SelfInvocationTest.Ledger.append(..)")
                .hasMessageContaining("SelfInvocationTest.Ledger.later(..), in a lambda, calls")
                .hasMessageContaining("through another bean");
    }

    @Test
    void aMethodReferenceAnAnonymousOrLocalClassAndAnInterfacesDefaultMethodFailStartupToo() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(HiddenShapes.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("SelfInvocationTest.Hidden.byReference(..) makes the method reference "
                        + "this::append to SelfInvocationTest.Hidden.append(..)")
                .hasMessageContaining("SelfInvocationTest$Hidden$1.run(..) calls SelfInvocationTest.Hidden.append(..)")
                .hasMessageContaining("SelfInvocationTest.Hidden.byLocal(..) "
                        + "calls SelfInvocationTest.Hidden.append(..)")
                .hasMessageContaining("SelfInvocationTest$Hidden$1Later.task(..), in a lambda, calls")
                .hasMessageContaining("SelfInvocationTest.Writer.entry(..), a default method, calls "
                        + "SelfInvocationTest.DefaultMethodWriter.write(..)")
                .hasMessageContaining("SelfInvocationTest.Batch.putTwice(..), a default method, calls "
                        + "SelfInvocationTest.GenericWriter.put(..)")
                .hasMessageContaining("SelfInvocationTest.Base.entry(..) calls SelfInvocationTest.CallsBaseEntry.write")
                .hasMessageContaining("SelfInvocationTest.RepositoryLike.addTwice(..), a default method, calls "
                        + "SelfInvocationTest.RepositoryLike.add(..)");
    }

    @Test
    void anOverloadedCallerOrCalleeIsNamedWithItsParameterTypes() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(OverloadedCalls.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("SelfInvocationTest.Overloads.append(String) calls "
                        + "SelfInvocationTest.Overloads.append(String, int)")
                .hasMessageContaining("SelfInvocationTest.Overloads.post(String, long[]) calls "
                        + "SelfInvocationTest.Overloads.append(String, int)")
                // a method reference to the unfenced overload is not a call of the fenced one
                .hasMessageNotContaining("this::append");
    }

    @Test
    void callsThroughAnotherBeanOrTheBeansOwnProxyAndSuperCallsOfAnOverrideAreFine() {
        new AnnotationConfigApplicationContext(CallsThroughOtherBeans.class).close();
    }
}
