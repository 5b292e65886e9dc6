package dev.fencing.boot.autoconfigure;

import org.springframework.aot.generate.GeneratedMethod;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotContribution;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.core.env.Environment;

import javax.lang.model.element.Modifier;

/**
 * At AOT processing ({@code spring-boot:process-aot}, and Spring's AOT processing of test contexts): adds to each
 * context's generated code the registration of the decisions its {@code fencing.*} properties took
 * ({@link FencingAotDecisions}), for {@link FencingAotCheck} to compare with the properties that context runs with.
 * Registered in {@code META-INF/spring/aot.factories}.
 */
class FencingAotProcessor implements BeanFactoryInitializationAotProcessor {

    @Override
    public BeanFactoryInitializationAotContribution processAheadOfTime(ConfigurableListableBeanFactory beanFactory) {
        Environment environment = beanFactory.getBeanProvider(Environment.class).getIfUnique();
        if (environment == null) {
            return null;
        }
        String decisions = FencingAotDecisions.text(FencingAotDecisions.of(environment));
        return (generationContext, code) -> {
            GeneratedMethod method = code.getMethods().add("registerFencingAotDecisions", builder -> {
                builder.addJavadoc("Registers the decisions fencing's properties took when this context was built.");
                builder.addModifiers(Modifier.PRIVATE);
                builder.addParameter(DefaultListableBeanFactory.class, "beanFactory");
                builder.addStatement("beanFactory.registerSingleton($S, $T.recorded($S))", FencingAotDecisions.BEAN,
                        FencingAotDecisions.class, decisions);
            });
            code.addInitializer(method.toMethodReference());
        };
    }
}
