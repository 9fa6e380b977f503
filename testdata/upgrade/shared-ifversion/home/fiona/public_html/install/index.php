<?php /* install */ ?>
