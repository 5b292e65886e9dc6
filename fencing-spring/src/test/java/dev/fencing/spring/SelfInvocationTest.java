package dev.fencing.spring;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.store.InMemoryFenceStore;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

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
    void callsThroughAnotherBeanOrTheBeansOwnProxyAndSuperCallsOfAnOverrideAreFine() {
        new AnnotationConfigApplicationContext(CallsThroughOtherBeans.class).close();
    }
}
