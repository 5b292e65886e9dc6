package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which inherited {@code @Fenced} applies: a declaration in a subtype wins over its supertypes'; declarations that
 * disagree with none overriding the others (two interfaces) fail startup, whatever the order of {@code implements}.
 */
@Timeout(60)
class InheritedFenceTest {

    public interface Left {
        @Fenced(resource = "left")
        String go();
    }

    public interface Right {
        @Fenced(resource = "right")
        String go();
    }

    public interface AlsoLeft {
        @Fenced(resource = "left")
        String go();
    }

    public static class LeftThenRight implements Left, Right {
        public String go() {
            return "went";
        }
    }

    public static class RightThenLeft implements Right, Left {
        public String go() {
            return "went";
        }
    }

    /** Two interfaces that agree: one fence. */
    public static class Agreeing implements Left, AlsoLeft {
        public String go() {
            return "went";
        }
    }

    /** Its own declaration wins over the interface's. */
    public static class Overriding implements Left {
        @Fenced(resource = "own")
        public String go() {
            return "went";
        }
    }

    /** A superclass's declaration overrides the interface it implements. */
    public abstract static class Base implements Left {
        @Fenced(resource = "base")
        public String go() {
            return "went";
        }
    }

    public static class Derived extends Base {
    }

    /** A superclass's declaration and an unrelated interface's disagree. */
    public static class DerivedAndRight extends Base implements Right {
    }

    /** No fence of its own. */
    public static class PlainBase {
        public String go() {
            return "went";
        }
    }

    /** Implements Right with the method it inherits: Right's declaration applies. */
    public static class InheritsTheImplementation extends PlainBase implements Right {
    }

    @Fenced(resource = "left-type")
    public interface LeftType {
        String run();
    }

    @Fenced(resource = "right-type")
    public interface RightType {
        String run();
    }

    public static class BothTypes implements LeftType, RightType {
        public String run() {
            return "ran";
        }
    }

    private static AnnotationConfigApplicationContext context(Class<?> beanClass) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.register(Config.class);
        registerBean(context, beanClass);
        context.refresh();
        return context;
    }

    @SuppressWarnings("unchecked")
    private static <T> void registerBean(AnnotationConfigApplicationContext context, Class<T> type) {
        context.registerBean(type, (Supplier<T>) () -> {
            try {
                return type.getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Configuration
    @EnableFencing(proxyTargetClass = true)
    static class Config {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }
    }

    @Test
    void twoInterfacesThatDisagreeFailStartupInEitherOrder() {
        for (Class<?> type : new Class<?>[] {LeftThenRight.class, RightThenLeft.class}) {
            assertThatThrownBy(() -> context(type).close()).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("@Fenced on InheritedFenceTest." + type.getSimpleName() + ".go() is ambiguous")
                    .hasMessageContaining("@Fenced(resource = \"left\") on InheritedFenceTest.Left.go()")
                    .hasMessageContaining("@Fenced(resource = \"right\") on InheritedFenceTest.Right.go()")
                    .hasMessageContaining("annotate InheritedFenceTest." + type.getSimpleName() + ".go() itself");
        }
    }

    @Test
    void twoTypeLevelDeclarationsThatDisagreeFailStartup() {
        assertThatThrownBy(() -> context(BothTypes.class).close()).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("BothTypes.run() is ambiguous")
                .hasMessageContaining("\"left-type\"").hasMessageContaining("\"right-type\"");
    }

    @Test
    void anUnrelatedSuperclassAndInterfaceThatDisagreeFailStartup() {
        assertThatThrownBy(() -> context(DerivedAndRight.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("is ambiguous").hasMessageContaining("\"base\"").hasMessageContaining("\"right\"");
    }

    @Test
    void interfacesThatAgreeAreOneFence() {
        try (AnnotationConfigApplicationContext context = context(Agreeing.class)) {
            assertThat(fencedBy(context.getBean(Agreeing.class)::go)).isEqualTo("left");
        }
    }

    @Test
    void aSubtypesDeclarationWinsOverItsSupertypes() {
        try (AnnotationConfigApplicationContext context = context(Overriding.class)) {
            assertThat(fencedBy(context.getBean(Overriding.class)::go)).isEqualTo("own");
        }
        try (AnnotationConfigApplicationContext context = context(Derived.class)) {
            assertThat(fencedBy(context.getBean(Derived.class)::go)).isEqualTo("base");
        }
    }

    @Test
    void aMethodASuperclassImplementsForTheClasssInterfaceIsFencedByIt() {
        try (AnnotationConfigApplicationContext context = context(InheritsTheImplementation.class)) {
            assertThat(fencedBy(context.getBean(InheritsTheImplementation.class)::go)).isEqualTo("right");
        }
    }

    /** The one resource whose token lets {@code call} through (each other one is refused as missing). */
    private static String fencedBy(Supplier<String> call) {
        String passed = null;
        for (String resource : new String[] {"left", "right", "own", "base"}) {
            try {
                FencingContext.call(new FencingToken(resource, 1, "h"), call::get);
                assertThat(passed).as("only one resource fences the call").isNull();
                passed = resource;
            } catch (MissingTokenException refused) {
                assertThat(refused).hasMessageContaining("No fencing token");
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
        return passed;
    }
}
