package dev.fencing.aspectj.nonbeans;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * In ASPECTJ mode woven code fences classes that are not beans too (made with {@code new}), so the startup check
 * reads the classes under the application's packages and fails for one whose fence would not run: not woven, an
 * override that weaving cannot see the annotation of, a static {@code @Fenced} method, a key that does not compile.
 * These classes are compiled by javac, never woven, and none of them is a bean. A new user's trial found them all
 * running unfenced without a word.
 */
class NonBeanWeavingCheckTest {

    /** Not a bean: made with {@code new} where it is used. */
    public static class Ledger {
        @Fenced(resource = "nonbean-ledger")
        public void write(long amount) {
        }
    }

    /** Not a bean either, with a fenced method of its own and one it overrides without repeating the annotation. */
    public static class Base {
        @Fenced(resource = "nonbean-base")
        public void save(String text) {
        }
    }

    public static class Sub extends Base {
        @Override
        public void save(String text) {
        }
    }

    public static class Statics {
        @Fenced(resource = "nonbean-static")
        public static void write() {
        }
    }

    public static class BadKey {
        @Fenced(resource = "nonbean-key", key = "#nope")
        public void write(long id) {
        }
    }

    @Configuration
    @EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
    static class Config {
    }

    @Test
    void everyNonBeanClassWhoseFenceWouldNotRunFailsStartup() {
        Throwable thrown = null;
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Config.class)) {
            context.getBean(Config.class);
        } catch (Throwable t) {
            thrown = t;
        }
        assertThat(thrown).as("startup must fail").isNotNull();
        Throwable cause = thrown;
        while (!(cause instanceof FencingConfigurationException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        assertThat(cause).isInstanceOf(FencingConfigurationException.class);
        assertThat(cause.getMessage())
                .contains("Ledger.write(long) is @Fenced but " + Ledger.class.getName() + " was not woven")
                .contains("Sub.save(String) gets @Fenced from")
                .contains("Statics.write() is static")
                .contains("#nope");
    }
}
