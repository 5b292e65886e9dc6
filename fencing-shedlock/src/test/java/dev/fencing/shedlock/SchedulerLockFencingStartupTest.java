package dev.fencing.shedlock;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;
import dev.fencing.token.FencingToken;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@link EnableSchedulerLockFencing} in a Spring context: the application's {@code LockProvider} bean is wrapped
 * and a job gets its token under both ShedLock intercept modes; a misconfiguration stops startup with a message
 * naming it.
 */
class SchedulerLockFencingStartupTest {

    /** A job under a lock named "report", bound for what it saw on its thread. */
    public static class ReportJob {
        final CountDownLatch ran = new CountDownLatch(1);
        final AtomicReference<FencingToken> seen = new AtomicReference<>();

        public CountDownLatch ran() { // through the method proxy, a method: its fields are the target's
            return ran;
        }

        public FencingToken seen() {
            return seen.get();
        }

        @Scheduled(fixedDelay = 50)
        @SchedulerLock(name = "report", lockAtMostFor = "PT10S")
        public void run() {
            if (ran.getCount() > 0) {
                seen.set(FencingContext.current("reports"));
                ran.countDown();
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        LockProvider lockProvider() {
            return new FakeLockProvider();
        }

        @Bean
        ReportJob reportJob() {
            return new ReportJob();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Issuer {
        @Bean
        TokenIssuer tokenIssuer() {
            return new InMemoryTokenIssuer();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    @EnableSchedulerLockFencing(resources = "report=reports", mappedOnly = true)
    static class MethodMode {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S",
            interceptMode = EnableSchedulerLock.InterceptMode.PROXY_SCHEDULER)
    @EnableSchedulerLockFencing(resources = "${report.lock:report}=reports")
    static class SchedulerMode {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    @EnableSchedulerLockFencing(resources = "nightly=ledger", mappedOnly = true)
    static class Unmapped {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLockFencing(resources = "report")
    static class BadMapping {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLockFencing(resources = "nightly=accounts;report=ledger") // two mappings in one element
    static class TwoMappingsInOne {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLockFencing(acquireTimeout = "5 seconds")
    static class BadTimeout {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLockFencing
    static class Plain {
    }

    /** The writes the jobs of {@link MisspeltAndKeyed} would reach. */
    public static class Writes {
        @Fenced(resource = "reports")
        public void report() {
        }

        @Fenced(resource = "ledger", key = "#id")
        public void post(long id) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    @EnableSchedulerLockFencing(resources = {"report=reports,reprots", "nightly=ledger"})
    static class MisspeltAndKeyed {
        @Bean
        Writes writes() {
            return new Writes();
        }
    }

    @Test
    void methodProxiesRunTheJobWithItsTokenBound() throws Exception {
        assertJobRunsFenced(MethodMode.class);
    }

    @Test
    void schedulerProxiesRunTheJobWithItsTokenBound() throws Exception {
        assertJobRunsFenced(SchedulerMode.class);
    }

    private static void assertJobRunsFenced(Class<?> mode) throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Beans.class,
                Issuer.class, mode)) {
            assertThat(context.getBean(LockProvider.class)).isInstanceOf(FencingLockProvider.class);
            ReportJob job = context.getBean(ReportJob.class);
            assertThat(job.ran().await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(job.seen()).isNotNull();
            assertThat(job.seen().resource()).isEqualTo("reports");
        }
    }

    private static final byte[] SECRET = new SecureRandom().generateSeed(32);

    /** The verifier every @Fenced check of a context with signed tokens uses. */
    @Configuration(proxyBeanMethods = false)
    static class Verifying {
        @Bean
        TokenVerifier tokenVerifier() {
            return new TokenVerifier(KeyRing.of(VerificationKey.hmac("k1", SECRET)));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Signing {
        @Bean
        TokenSigner tokenSigner() {
            return TokenSigner.hmac("k1", SECRET);
        }
    }

    /**
     * With a TokenSigner bean a job's token is signed, as @Fenced(acquire = true)'s are, and the verifier accepts it; a
     * verifier with nothing to sign stops startup (a new user's trial of the same with FencedLockRegistry had every
     * write refused as forged).
     */
    @Test
    void aJobsTokenIsSignedWithTheContextsSignerAndAVerifierWithoutOneStopsStartup() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Beans.class,
                Issuer.class, Verifying.class, Signing.class, MethodMode.class)) {
            ReportJob job = context.getBean(ReportJob.class);
            assertThat(job.ran().await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(job.seen().isSigned()).as("signed: %s", job.seen()).isTrue();
            assertThat(context.getBean(TokenVerifier.class).verify(job.seen()).valid()).isTrue();
        }
        assertThat(startupFailure(Beans.class, Issuer.class, Verifying.class, MethodMode.class))
                .contains("LockProvider bean 'lockProvider'").contains("does not sign")
                .contains("would be refused as forged").contains("TokenSigner bean").contains("@SchedulerLock jobs");
    }

    @Test
    void withoutATokenIssuerStartupFails() {
        assertThat(startupFailure(Beans.class, Plain.class)).contains("no TokenIssuer bean").contains("'lockProvider'");
    }

    /**
     * The missing issuer is this library's failure, not the bean factory's: with the bean factory's exception as its
     * cause, Boot's failure analysis showed "A component required a bean of type TokenIssuer" and hid the fix (a new
     * user's ShedLock trial).
     */
    @Test
    void aMissingTokenIssuerIsReportedAsFencingsOwnFailure() {
        Throwable thrown = catchThrowable(() -> new AnnotationConfigApplicationContext(Beans.class, Plain.class)
                .close());
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            assertThat(t).isNotInstanceOf(org.springframework.beans.factory.NoSuchBeanDefinitionException.class);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableSchedulerLockFencing(resources = "report=reports")
    static class WithoutShedLocksOwnLock {
    }

    /**
     * Fencing ShedLock's locks while ShedLock locks nothing (its @EnableSchedulerLock forgotten) stops startup naming
     * the methods: every instance would run them at once and every fenced write would be refused as missing.
     */
    @Test
    void schedulerLockMethodsWithoutEnableSchedulerLockStopStartup() {
        assertThat(startupFailure(Beans.class, Issuer.class, WithoutShedLocksOwnLock.class))
                .contains("@EnableSchedulerLock is missing").contains("ReportJob.run");
    }

    @Test
    void withoutALockProviderStartupFails() {
        assertThat(startupFailure(Issuer.class, Plain.class)).contains("found no ShedLock LockProvider bean");
    }

    /**
     * A LockProvider bean that a post-processor needs is created before {@code @EnableSchedulerLockFencing}'s
     * post-processor runs, and is never wrapped. Alone, startup said there was no LockProvider bean at all ("declare
     * one"); beside another one, which was wrapped, it started without a word, and a job ShedLock locked with the early
     * one (@LockProviderToUse, @Primary) ran without a token.
     */
    @Test
    void aLockProviderCreatedBeforeThePostProcessorStopsStartupNamingIt() {
        assertThat(startupFailure(Issuer.class, EarlyProvider.class, Plain.class))
                .contains("did not wrap").contains("[earlyLockProvider]").contains("@Lazy");
        assertThat(startupFailure(Issuer.class, EarlyProvider.class, Beans.class, Plain.class))
                .as("beside a provider that was wrapped").contains("did not wrap").contains("[earlyLockProvider]");
    }

    /**
     * {@code @EnableSchedulerLockFencing} on two configuration classes (one per module): the second one's mappings
     * and {@code mappedOnly} were dropped without a word, its job fenced under its lock name and each write refused
     * as missing. They are merged now, the stricter {@code mappedOnly} wins, and two timeouts fail startup.
     */
    @Test
    void theAnnotationOnTwoConfigurationsMergesTheirMappings() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                Issuer.class, Beans.class, ModuleA.class, ModuleB.class)) {
            FencingLockProvider provider = (FencingLockProvider) context.getBean(LockProvider.class);
            assertThat(provider.mappings()).containsOnlyKeys("report", "nightly");
            assertThat(provider.resourcesFor("nightly")).containsExactly("ledger");
            assertThat(provider.mappedOnly()).isTrue();
        }
        assertThat(startupFailure(Issuer.class, Beans.class, ModuleA.class, ModuleC.class))
                .contains("declared more than once").contains("\"PT5S\"").contains("\"PT9S\"");
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    @EnableSchedulerLockFencing(resources = "report=reports")
    static class ModuleA {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLockFencing(resources = "nightly=ledger", mappedOnly = true)
    static class ModuleB {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLockFencing(resources = "nightly=ledger", acquireTimeout = "PT9S")
    static class ModuleC {
    }

    /**
     * A lazy LockProvider bean ({@code @Lazy}, or Spring Boot's {@code spring.main.lazy-initialization=true}) was not
     * created by the end of startup, so nothing had been wrapped and startup failed saying there was no LockProvider
     * bean ("declare one"). The end-of-startup check now looks the beans up, which creates it, wrapped.
     */
    @Test
    void aLazyLockProviderIsWrappedNotReportedMissing() {
        try (AnnotationConfigApplicationContext context =
                     new AnnotationConfigApplicationContext(Issuer.class, LazyProvider.class, Plain.class)) {
            assertThat(context.getBean(LockProvider.class)).isInstanceOf(FencingLockProvider.class);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LazyProvider {
        @Bean
        @org.springframework.context.annotation.Lazy
        LockProvider lockProvider() {
            return new FakeLockProvider();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class EarlyProvider {
        @Bean
        static LockProvider earlyLockProvider() {
            return new FakeLockProvider();
        }

        @Bean
        static org.springframework.beans.factory.config.BeanPostProcessor lockAudit(
                @org.springframework.beans.factory.annotation.Qualifier("earlyLockProvider") LockProvider early) {
            return new org.springframework.beans.factory.config.BeanPostProcessor() {
            };
        }
    }

    @Test
    void anUnmappedSchedulerLockStopsStartupWhenOnlyMappedNamesAreAllowed() {
        assertThat(startupFailure(Beans.class, Issuer.class, Unmapped.class))
                .contains("'report'").contains("has no fencing resource mapped").contains("[nightly]");
    }

    @Test
    void aMappingOrTimeoutThatDoesNotParseStopsStartup() {
        assertThat(startupFailure(Beans.class, Issuer.class, BadMapping.class))
                .contains("\"report\"").contains("lockName=resource");
        assertThat(startupFailure(Beans.class, Issuer.class, TwoMappingsInOne.class))
                .contains("nightly=accounts;report=ledger").contains("one mapping per array element");
        assertThat(startupFailure(Beans.class, Issuer.class, BadTimeout.class))
                .contains("\"5 seconds\"").contains("PT5S");
    }

    private static String startupFailure(Class<?>... configuration) {
        Throwable thrown = catchThrowable(() -> new AnnotationConfigApplicationContext(configuration).close());
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof FencingConfigurationException) {
                return t.getMessage();
            }
        }
        throw new AssertionError("expected a FencingConfigurationException at startup", thrown);
    }

    /**
     * A mapping to a resource no @Fenced method declares (a typo), or to one only keyed methods check, starts (the
     * job's writes may be checked in another service) and is warned about; a declared unkeyed resource is not (a new
     * user's trial: both ran, every run refused as missing, with no word at startup).
     */
    @Test
    void mappingsToUndeclaredOrKeyedOnlyResourcesAreWarnedAbout() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Beans.class,
                Issuer.class, MisspeltAndKeyed.class)) {
            List<String> warnings = context.getBean(LockProviderFencer.class).mappingWarnings();
            assertThat(warnings).hasSize(3);
            assertThat(warnings.get(0)).contains("no @Fenced method of this application declares resource 'reprots'")
                    .contains("declared: [ledger, reports]");
            assertThat(warnings.get(1)).contains("no @SchedulerLock method uses lock name 'nightly'")
                    .contains("their names: [report]");
            assertThat(warnings.get(2)).contains("resource 'ledger' is checked only with a key here")
                    .contains("map the job to the one entity it writes ('ledger:<key>')");
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    @EnableSchedulerLockFencing(resources = "report=ledger:eu")
    static class OneEntity {
        @Bean
        Writes writes() {
            return new Writes();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    @EnableSchedulerLockFencing(resources = "nightly=reports")
    static class UnmappedJob {
        @Bean
        Writes writes() {
            return new Writes();
        }
    }

    /**
     * A mapping to one entity of a keyed resource is what the keyed methods check: no warning (a re-trial's job
     * mapped to 'ledgerk:R' was warned about as undeclared while every run was accepted). An unmapped job whose lock
     * name no method declares is warned about, with the mapping that fixes it.
     */
    @Test
    void aMappingToOneEntityIsNotWarnedAboutAndAnUnmappedJobNamedAfterNoResourceIs() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Beans.class,
                Issuer.class, OneEntity.class)) {
            assertThat(context.getBean(LockProviderFencer.class).mappingWarnings()).isEmpty();
        }
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Beans.class,
                Issuer.class, UnmappedJob.class)) {
            assertThat(context.getBean(LockProviderFencer.class).mappingWarnings()).anySatisfy(warning ->
                    assertThat(warning).contains("@SchedulerLock(name = \"report\") has no mapping")
                            .contains("resources = \"report=<resource>\""));
        }
    }
}
