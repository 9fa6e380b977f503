<?php /* forum */ ?>
