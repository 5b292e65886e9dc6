package dev.fencing.boot.autoconfigure;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.guard.RejectionListener;
import dev.fencing.mode.FenceModes;
import dev.fencing.signing.TokenVerifier;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.amqp.autoconfigure.RabbitListenerRetrySettingsCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.function.Predicate;

/**
 * With fencing-amqp on the class path, a listener container never ignores the {@code Fencing-Token} header: every
 * listener container factory bean and container bean without a {@link FencingTokenListenerAdvice} gets
 * {@link FencingTokenListenerAdvice#trustingNone()} at the head of its advice chain, so a message carrying the header
 * there is rejected without requeue instead of having its token (perhaps a zombie's) set aside unseen by a
 * {@code @Fenced(acquire = true)} method. Trusting a container's publishers stays the application's decision: the
 * advice that accepts their tokens is never added for it. Before the containers start, startup names the containers
 * that trust no sender (INFO) and fails, before any container starts, on one that would still ignore the header (a
 * factory that is not a bean, an advice chain replaced by a container customizer), and on an asynchronous listener
 * that does not fit the application's advice ({@link FencingTokenListenerAdvice#forAsyncListeners()}: without it, or
 * with failed results requeued; or a synchronous listener with it). With Spring Boot's AMQP support,
 * Boot's listener retry does not retry a listener call a fence refused
 * ({@link FencingTokenListenerAdvice#isFenceRefusal}): redelivery cannot make it valid, and each attempt would check,
 * and count, the same token again. Where the application has a {@link TokenVerifier} bean (the signing keys of
 * {@code fencing.signing.*}), the application's {@link FencingTokenListenerAdvice}s in those chains verify the tokens
 * before the listener runs ({@link FencingTokenListenerAdvice#verifying}), as the starter's HTTP filter does.
 */
@AutoConfiguration(after = FencingAutoConfiguration.class)
@ConditionalOnClass({FencingTokenListenerAdvice.class, RabbitListenerEndpointRegistry.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
public class FencingAmqpAutoConfiguration {

    @Bean
    static ListenerAdviceInstaller fencingListenerAdviceInstaller(ObjectProvider<MeterRegistry> registry,
                                                                  ObjectProvider<TokenVerifier> verifier,
                                                                  ObjectProvider<FenceModes> modes,
                                                                  ObjectProvider<RejectionListener> rejections) {
        return new ListenerAdviceInstaller(registry, verifier, modes, rejections);
    }

    @Bean
    static ListenerAdviceCheck fencingListenerAdviceCheck() {
        return new ListenerAdviceCheck();
    }

    /** Boot's listener retry (spring.rabbitmq.listener.*.retry) leaves fence refusals alone. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RabbitListenerRetrySettingsCustomizer.class)
    static class NoRetryOfRefusals {
        @Bean
        RabbitListenerRetrySettingsCustomizer fencingNoRetryOfRefusals() {
            return settings -> {
                Predicate<Throwable> retryable = failure -> !FencingTokenListenerAdvice.isFenceRefusal(failure);
                Predicate<Throwable> own = settings.getExceptionPredicate();
                settings.setExceptionPredicate(own == null ? retryable : own.and(retryable));
            };
        }
    }
}
