package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;

/** What every implementation of a recipe row shares: the recipe, its scenario, and the section it checks. */
abstract class RecipeWorkload implements Workload {

    final WardenRecipe.Recipe recipe;
    final SharedSection section;

    RecipeWorkload(WardenRecipe.Recipe recipe) {
        this.recipe = recipe;
        this.section = SharedSection.of(recipe);
    }

    @Override
    public String scenario() {
        return recipe.scenario;
    }

    boolean semaphore() {
        return recipe == WardenRecipe.Recipe.SEMAPHORE;
    }
}
