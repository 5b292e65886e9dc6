package dev.fencing.spring;

import dev.fencing.store.FenceStore;
import dev.fencing.store.FencedCall;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With {@code @EnableFencing} and no Spring Boot, a store that is no bean behind a route of the application's
 * {@code RoutingFenceStore} bean (nested routes too) gets the bean factory before it is verified, as it would as a
 * bean (a {@code JdbcFenceStore} then listens to every transaction manager bean); a routed store that is a bean keeps
 * the one Spring gave it.
 */
@Timeout(30)
class RoutedStoreBeanFactoryTest {

    /** Records each bean factory it is given and what was done first: given one, then verified. */
    static final class AwareStore implements FenceStore, BeanFactoryAware {
        final InMemoryFenceStore delegate = new InMemoryFenceStore();
        final List<Object> events = new CopyOnWriteArrayList<>();

        @Override
        public <T> T fence(String resource, FencingToken token, FencedCall<T> write) throws Throwable {
            return delegate.fence(resource, token, write);
        }

        @Override
        public void setBeanFactory(BeanFactory beanFactory) {
            events.add(beanFactory);
        }

        @Override
        public void verify() {
            events.add("verify");
        }
    }

    static final AwareStore ROUTED = new AwareStore();
    static final AwareStore NESTED = new AwareStore();
    static final AwareStore FALLBACK = new AwareStore();

    @Configuration
    @EnableFencing
    static class Application {
        @Bean
        Fixtures.Ledger ledger() {
            return new Fixtures.Ledger();
        }

        @Bean
        AwareStore routedBean() {
            return new AwareStore();
        }

        @Bean
        @Primary
        FenceStore fenceStore(AwareStore routedBean) {
            return RoutingFenceStore.builder().route("orders", ROUTED).route("bean", routedBean)
                    .route("nested", RoutingFenceStore.builder().route("nested", NESTED).build())
                    .fallback(FALLBACK).build();
        }
    }

    @Test
    void aRoutedStoreThatIsNoBeanGetsTheBeanFactoryBeforeItIsVerifiedAndABeanKeepsSpringsOne() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Application.class)) {
            Object factory = context.getBeanFactory();
            for (AwareStore store : List.of(ROUTED, NESTED, FALLBACK)) {
                assertThat(store.events).containsExactly(factory, "verify");
            }
            assertThat(context.getBean("routedBean", AwareStore.class).events).containsExactly(factory, "verify");
        }
    }
}
