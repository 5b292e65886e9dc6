package dev.fencing.spring.product;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.PriorityOrdered;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A singleton {@code FactoryBean} whose product type is an interface without {@code @Fenced}, making an object of a
 * class with {@code @Fenced} methods: startup checked the interface only, so a product made before the auto-proxy
 * creator ran its writes unchecked, and a bad key failed on the first call instead of at startup.
 */
@Timeout(30)
class FactoryProductByInterfaceTest {

    public interface Journal {
        void post(long entry);
    }

    public static class FencedJournal implements Journal {
        final List<Long> posted = new CopyOnWriteArrayList<>();

        @Override
        @Fenced(resource = "journal", key = "#entry")
        public void post(long entry) {
            posted.add(entry);
        }
    }

    public static class BadKeyJournal implements Journal {
        @Override
        @Fenced(resource = "journal", key = "#nope")
        public void post(long entry) {
        }
    }

    static class JournalFactoryBean implements FactoryBean<Journal> {
        private final Journal journal;

        JournalFactoryBean(Journal journal) {
            this.journal = journal;
        }

        @Override
        public Journal getObject() {
            return journal;
        }

        @Override
        public Class<?> getObjectType() {
            return Journal.class;
        }
    }

    static class AuditingPostProcessor implements BeanPostProcessor, PriorityOrdered {
        AuditingPostProcessor(Journal journal) {
        }

        @Override
        public int getOrder() {
            return 0;
        }
    }

    static class Consumer {
        Consumer(Journal journal) {
        }
    }

    @Configuration
    @EnableFencing
    static class EarlyProduct {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        static JournalFactoryBean journal() {
            return new JournalFactoryBean(new FencedJournal());
        }

        @Bean
        static AuditingPostProcessor auditing(Journal journal) {
            return new AuditingPostProcessor(journal);
        }
    }

    @Configuration
    @EnableFencing
    static class BadKeyProduct {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        static JournalFactoryBean journal() {
            return new JournalFactoryBean(new BadKeyJournal());
        }

        @Bean
        Consumer consumer(Journal journal) {
            return new Consumer(journal);
        }
    }

    @Test
    void anEarlyProductKnownByItsInterfaceFailsStartup() {
        assertThatThrownBy(() -> {
            try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                    EarlyProduct.class)) {
                Journal journal = context.getBean(Journal.class);
                journal.post(7);
                throw new AssertionError("started; proxy=" + AopUtils.isAopProxy(journal)
                        + ", and the journal posted with no token bound");
            }
        }).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("not a proxy running the fence advisor");
    }

    @Test
    void aBadKeyOfAProductKnownByItsInterfaceFailsStartup() {
        assertThatThrownBy(() -> {
            try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                    BadKeyProduct.class)) {
                throw new AssertionError("started");
            }
        }).isInstanceOf(FencingConfigurationException.class).hasMessageContaining("#nope");
    }
}
