package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A fenced method that implements a generic interface's method with a concrete type ({@code write(Long, long)} for
 * {@code write(ID, long)}) is declared on the interface, through its bridge: a JDK proxy fences it, and the startup
 * check does not refuse it as missing from the interfaces (a new user's trial was refused so).
 */
@Timeout(30)
class GenericInterfaceProxyTest {

    interface Writer<I> {
        void write(I id, long balance);
    }

    static class LongWriter implements Writer<Long> {
        final List<String> written = new ArrayList<>();

        @Override
        @Fenced(resource = "acct", key = "#id")
        public void write(Long id, long balance) {
            written.add(id + "=" + balance);
        }
    }

    @Configuration
    @EnableFencing
    static class Config {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        InMemoryTokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }

        @Bean
        LongWriter writer() {
            return new LongWriter();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void aJdkProxyFencesTheImplementationOfAGenericInterfacesMethod() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Config.class)) {
            Writer<Long> writer = context.getBean("writer", Writer.class);
            assertThat(AopUtils.isJdkDynamicProxy(writer)).isTrue();
            assertThatThrownBy(() -> writer.write(7L, 1)).isInstanceOf(MissingTokenException.class)
                    .hasMessageContaining("acct:7");
            FencingContext.run(new FencingToken("acct:7", 5, "h"), () -> writer.write(7L, 100));
            assertThatThrownBy(() -> FencingContext.run(new FencingToken("acct:7", 4, "old"),
                    () -> writer.write(7L, 200))).isInstanceOf(StaleTokenException.class);
            LongWriter target = (LongWriter) AopUtils.getTargetClass(writer).cast(
                    ((org.springframework.aop.framework.Advised) writer).getTargetSource().getTarget());
            assertThat(target.written).containsExactly("7=100");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
