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

    /** A generic interface: its {@code go(T)} runs as {@code go(String)} through a bridge method. */
    public interface GenericApi<T> {
        @Fenced(resource = "generic-api")
        String take(T item);
    }

    public static class StringBase {
        public String take(String item) {
            return "took " + item;
        }
    }

    /** Implements the generic interface with the method its superclass has. */
    public static class TakesThroughBase extends StringBase implements GenericApi<String> {
    }

    public static class GenericBase<T> {
        @Fenced(resource = "generic-base")
        public String take(T item) {
            return "took " + item;
        }
    }

    public interface StringApi {
        @Fenced(resource = "string-api")
        String take(String item);
    }

    /** A generic superclass's declaration and an unrelated interface's disagree. */
    public static class GenericBaseAndApi extends GenericBase<String> implements StringApi {
        @Override
        public String take(String item) {
            return super.take(item);
        }
    }

    public static class GenericBaseAndApiInherited extends GenericBase<String> implements StringApi {
    }

    /** No fence of its own: the generic superclass's applies, also behind a JDK proxy of this interface. */
    public interface PlainStringApi {
        String take(String item);
    }

    public static class GenericBaseBehindApi extends GenericBase<String> implements PlainStringApi {
    }

    public interface KeyedByFirst {
        @Fenced(resource = "keyed", key = "#a")
        String pair(String a, String b);
    }

    public interface KeyedBySecond {
        @Fenced(resource = "keyed", key = "#a")
        String pair(String b, String a);
    }

    /** The same texts, but #a is the first argument in one declaration and the second in the other. */
    public static class KeyedBoth implements KeyedByFirst, KeyedBySecond {
        public String pair(String a, String b) {
            return a + b;
        }
    }

    public interface Reporting {
        @Fenced(resource = "acq", acquire = true)
        String open();
    }

    public interface Quiet {
        @Fenced(resource = "acq", acquire = true, reportUnchecked = false)
        String open();
    }

    public static class ReportingAndQuiet implements Reporting, Quiet {
        public String open() {
            return "opened";
        }
    }

    @Fenced(resource = "orders")
    public interface OrderWriter {
        String order();
    }

    @Fenced(resource = "audit")
    public interface AuditWriter {
        String audit();
    }

    /** Each interface's type-level fence speaks for its own methods. */
    public static class Writers implements OrderWriter, AuditWriter {
        public String order() {
            return "ordered";
        }

        public String audit() {
            return "audited";
        }

        /** Declared by neither: both could apply. */
        public String neither() {
            return "neither";
        }
    }

    public static class OnlyWriters implements OrderWriter, AuditWriter {
        public String order() {
            return "ordered";
        }

        public String audit() {
            return "audited";
        }
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

    /** Interface proxies (not Spring Boot's default). */
    @Configuration
    @EnableFencing
    static class InterfaceProxies {
        @Bean
        InMemoryFenceStore fenceStore() {
            return new InMemoryFenceStore();
        }

        @Bean
        GenericBaseBehindApi genericBaseBehindApi() {
            return new GenericBaseBehindApi();
        }
    }

    @Test
    void aGenericSuperclassesFenceRunsBehindAnInterfaceProxy() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                InterfaceProxies.class)) {
            PlainStringApi api = context.getBean(PlainStringApi.class);
            assertThat(org.springframework.aop.support.AopUtils.isJdkDynamicProxy(api)).isTrue();
            assertThat(fencedBy(() -> api.take("x"), "generic-base", "string-api")).isEqualTo("generic-base");
        }
    }

    @Test
    void twoInterfacesThatDisagreeFailStartupInEitherOrder() {
        for (Class<?> type : new Class<?>[] {LeftThenRight.class, RightThenLeft.class}) {
            assertThatThrownBy(() -> context(type).close()).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("@Fenced on InheritedFenceTest." + type.getSimpleName()
                            + ".go() is ambiguous")
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
                .hasMessageContaining("is ambiguous").hasMessageContaining("\"base\"")
                .hasMessageContaining("\"right\"");
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

    @Test
    void aGenericInterfacesMethodASuperclassImplementsIsFencedByIt() {
        try (AnnotationConfigApplicationContext context = context(TakesThroughBase.class)) {
            TakesThroughBase bean = context.getBean(TakesThroughBase.class);
            assertThat(fencedBy(() -> bean.take("x"), "generic-api", "right")).isEqualTo("generic-api");
            @SuppressWarnings("unchecked")
            GenericApi<String> api = context.getBean(GenericApi.class);
            assertThat(fencedBy(() -> api.take("x"), "generic-api", "right")).isEqualTo("generic-api");
        }
    }

    @Test
    void aGenericSuperclassAndAnInterfaceThatDisagreeFailStartup() {
        for (Class<?> type : new Class<?>[] {GenericBaseAndApi.class, GenericBaseAndApiInherited.class}) {
            assertThatThrownBy(() -> context(type).close()).isInstanceOf(FencingConfigurationException.class)
                    .hasMessageContaining("is ambiguous").hasMessageContaining("\"generic-base\"")
                    .hasMessageContaining("\"string-api\"");
        }
    }

    @Test
    void aKeyNamingDifferentParametersInTwoDeclarationsFailsStartup() {
        assertThatThrownBy(() -> context(KeyedBoth.class).close()).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("KeyedBoth.pair(String, String) is ambiguous")
                .hasMessageContaining("whose parameters are (a, b)")
                .hasMessageContaining("whose parameters are (b, a)");
    }

    @Test
    void declarationsThatDifferOnlyInReportingSaySo() {
        assertThatThrownBy(() -> context(ReportingAndQuiet.class).close())
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("@Fenced(resource = \"acq\", acquire = true) on InheritedFenceTest.Reporting")
                .hasMessageContaining("@Fenced(resource = \"acq\", acquire = true, reportUnchecked = false) on "
                        + "InheritedFenceTest.Quiet");
    }

    @Test
    void typeLevelDeclarationsOfTwoInterfacesSpeakForTheirOwnMethods() {
        assertThatThrownBy(() -> context(Writers.class).close()).isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Writers.neither() is ambiguous")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("Writers.order()")
                        .doesNotContain("Writers.audit()"));
        try (AnnotationConfigApplicationContext context = context(OnlyWriters.class)) {
            OnlyWriters bean = context.getBean(OnlyWriters.class);
            assertThat(fencedBy(bean::order, "orders", "audit")).isEqualTo("orders");
            assertThat(fencedBy(bean::audit, "orders", "audit")).isEqualTo("audit");
        }
    }

    /** The one resource whose token lets {@code call} through (each other one is refused as missing). */
    private static String fencedBy(Supplier<String> call) {
        return fencedBy(call, "left", "right", "own", "base");
    }

    private static String fencedBy(Supplier<String> call, String... resources) {
        String passed = null;
        for (String resource : resources) {
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
